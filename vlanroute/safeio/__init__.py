"""Files from and for the user, handled safely (docs/limits.md): a top-level helper package,
below every stage.

- `reading`: a file a user named, read with limits: regular files only, a size cap, a
  nesting depth for YAML and JSON, never its content quoted in an error.
- `private`: state directories and files of mode 0700/0600, never reached through a link.
- `output`: one output file written whole, never through a link at its path.
- `paths`: a path the user named, refused when the system cannot take its length.
"""
