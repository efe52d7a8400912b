"""Seed files of the consistent ERP world (a package so the files ship in the wheel); written by
`python -m myna.backends.erp.world -o myna/backends/erp/reference_world`."""
