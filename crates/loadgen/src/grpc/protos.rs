//! `--proto` files read as every input file is, through `iolab_files`'
//! capped reader (issue 49, finding 9: `protox` read `/dev/zero` to 4.2 GB
//! and a FIFO with no end): a device or folder is refused in one line, a
//! regular file over the cap before a byte is read, a FIFO within its
//! deadline. Imports are found beside each file, and the well-known
//! `google/protobuf/*.proto` built in, as `protox::compile` does.

use std::io;
use std::path::{Path, PathBuf};

use protox::file::{
    ChainFileResolver, File, FileResolver, GoogleFileResolver, IncludeFileResolver,
};
use protox::{Compiler, Error};

/// Largest `.proto` file read (the largest of Google's APIs are under
/// 200 KiB).
pub const MAX_PROTO: u64 = 4 << 20;

/// Files under one include folder, read through the capped reader.
struct Capped {
    include: PathBuf,
    names: IncludeFileResolver,
}

impl FileResolver for Capped {
    fn resolve_path(&self, path: &Path) -> Option<String> {
        self.names.resolve_path(path)
    }

    fn open_file(&self, name: &str) -> Result<File, Error> {
        let path = self.include.join(name);
        match iolab_files::read_text(&path, MAX_PROTO) {
            Ok(text) => File::from_source(name, &text),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Err(Error::file_not_found(name)),
            Err(e) => Err(Error::new(io::Error::new(
                e.kind(),
                format!("{} {e}", path.display()),
            ))),
        }
    }
}

/// A compiler finding files under `includes`, in order, then Google's.
pub fn compiler(includes: &[&Path]) -> Compiler {
    let mut chain = ChainFileResolver::new();
    for include in includes {
        chain.add(Capped {
            include: include.to_path_buf(),
            names: IncludeFileResolver::new(include.to_path_buf()),
        });
    }
    chain.add(GoogleFileResolver::new());
    let mut compiler = Compiler::with_file_resolver(chain);
    compiler.include_source_info(true).include_imports(true);
    compiler
}
