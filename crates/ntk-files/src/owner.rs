//! Whose a file is: the tools replace or remove only this user's files.

use std::fs;
use std::os::unix::fs::MetadataExt;

/// `(owner, this user)` where a file's owner (`meta`) is another user than this process's
/// (its effective user); `None` where it is this user's.
pub fn not_ours(meta: &fs::Metadata) -> Option<(u32, u32)> {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    (meta.uid() != me).then_some((meta.uid(), me))
}
