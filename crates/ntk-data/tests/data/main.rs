//! ntk-data's integration tests, one binary (each file a module): malformed files, the
//! CIFAR-10 layout, the real data sets and the user's own arrays.

mod bad_files;
mod cifar;
mod real_data;
mod user_files;
