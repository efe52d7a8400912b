"""Seed files of the consistent ITSM world (a package so the files ship in the wheel); written by
`python -m myna.backends.itsm.world -o myna/backends/itsm/reference_world`."""
