//! shed's integration tests, one binary: a module per subject (`cargo test -p shed --test it <module>::`).

// A test stops where the unexpected happens, saying why: unwrap and
// expect are how it says so (the workspace's lints deny them elsewhere).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod access_matrix;
mod activity;
mod agent_start;
mod apps;
mod backup_restore;
mod behind_a_proxy;
mod broker_harness;
mod broker_protocol;
mod broker_support;
mod cli_care;
mod cli_lists;
mod data_folder;
mod data_place;
mod document_fetches;
mod entity_display;
mod file_budget;
mod first_run;
mod graceful_stop;
mod harness_attacks;
mod health;
mod job_secret;
mod kept_refusals;
mod listening;
mod live_pages;
mod logs;
mod mcp_sessions;
mod migrate;
mod module_graph;
mod newcomer_cli;
mod oauth;
mod operating_support;
mod passkeys;
mod platform_pages;
mod postgres_stop;
mod postgres_tls;
mod slow_clients;
mod slow_queries;
mod suggestions;
mod take_back;
mod telemetry;
mod two_servers;
mod undo;
mod web_door;
mod write_bounds;
