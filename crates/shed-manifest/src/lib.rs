//! shed-manifest: reads an app's `vocab.json` and `tools.json` (or `tools.yml`)
//! into the commands the app offers, and fills a command's template from a call.
