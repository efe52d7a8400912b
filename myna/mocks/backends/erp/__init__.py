"""The built-in ERP-like (procure-to-pay) back end: corpus, reference service, rules, model.

Reading this package's model registers the `erp` extension it names.
"""

from myna.mocks.backends.erp import extension as extension
