//! shed's integration tests, one binary: a module per subject (`cargo test -p shed --test it <module>::`).

mod access_matrix;
mod apps;
mod backup_restore;
mod broker_harness;
mod broker_protocol;
mod broker_support;
mod data_folder;
mod data_place;
mod graceful_stop;
mod health;
mod job_secret;
mod listening;
mod logs;
mod mcp_sessions;
mod migrate;
mod module_graph;
mod oauth;
mod operating_support;
mod passkeys;
mod platform_pages;
mod slow_clients;
mod slow_queries;
mod take_back;
mod telemetry;
mod two_servers;
mod web_door;
