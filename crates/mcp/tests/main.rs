//! The integration tests of augur-mcp, one binary: each module is one of the files beside
//! this one (`cargo test -p augur-mcp --test mcp MODULE::`).

mod docs;
mod server;
mod sessions;
mod stdio;
