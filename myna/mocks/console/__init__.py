"""The web console `myna serve` serves under `/_myna/admin/console/` (see `app.ConsoleAsgi`)."""
