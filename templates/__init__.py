"""Jinja2 templates, shipped as the package vlanroute.templates (see templates/README.md)."""
