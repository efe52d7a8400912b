"""Seed files of the consistent ITSM world (a package so the files ship in the wheel); written by
`python -m myna.mocks.backends.itsm.world -o myna/mocks/backends/itsm/reference_world`."""
