//! shed-store: the one place shed's data is kept. The entity–component data of
//! every app, the filter-line language that reads it, and the platform's own
//! tables (people, spaces, apps, tokens, jobs).
