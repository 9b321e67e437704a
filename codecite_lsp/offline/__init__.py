"""The offline answerer: the sources' best lines quoted, no model."""
