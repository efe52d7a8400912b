"""Stage 4: turn logged failures into audited, targeted RL episodes."""
