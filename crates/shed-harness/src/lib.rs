//! shed-harness: puts a host's declared commands in front of a model as
//! `list_commands`, `run_command` and `run_read_command`.
