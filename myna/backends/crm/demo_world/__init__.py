"""Seed files of the demo-sized CRM world (a package so the files ship in the wheel); written by
`python -m myna.backends.crm.demo -o myna/backends/crm/demo_world`."""
