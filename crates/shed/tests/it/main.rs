//! shed's integration tests, one binary: a module per subject (`cargo test -p shed --test it <module>::`).

mod access_matrix;
mod broker_harness;
mod broker_protocol;
mod broker_support;
mod data_folder;
mod listening;
mod mcp_sessions;
mod module_graph;
mod slow_clients;
mod slow_queries;
mod take_back;
mod web_door;
