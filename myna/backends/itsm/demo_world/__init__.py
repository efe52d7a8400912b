"""The ITSM back end's demo-sized world, as seed files; regenerate with
`python -m myna.backends.itsm.demo -o myna/backends/itsm/demo_world`."""
