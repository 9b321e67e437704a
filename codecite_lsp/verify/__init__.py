"""Verification: a model's reply -> citations checked against this request's sources."""
