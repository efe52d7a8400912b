"""Seed files of the consistent ERP world (a package so the files ship in the wheel); written by
`python -m myna.mocks.backends.erp.world -o myna/mocks/backends/erp/reference_world`."""
