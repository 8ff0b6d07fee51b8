//! Writing a buffer's final contents (`--dump NAME=PATH`): raw little-endian
//! bytes, or a NumPy `.npy` file when the path ends in `.npy`. The bytes are
//! copied out of global memory a piece at a time, so a dump of a large
//! buffer needs no second copy of it.

use std::io::{self, Write};
use std::path::Path;

use warpsim_machine::GlobalMemory;

use crate::launch_file::ElementType;
use crate::npy;

/// How a dump is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DumpFormat {
    /// The buffer's bytes as they are.
    Raw,
    /// An `.npy` file (version 1.0, shape `(len,)`) of the buffer's type.
    Npy,
}

impl DumpFormat {
    /// The format a dump to `path` gets: `.npy` by its extension (in any
    /// case), raw bytes otherwise.
    pub fn for_path(path: &Path) -> DumpFormat {
        match path.extension() {
            Some(extension) if extension.eq_ignore_ascii_case("npy") => DumpFormat::Npy,
            _ => DumpFormat::Raw,
        }
    }
}

/// How much is copied out of global memory at a time.
const PIECE_BYTES: usize = 1 << 20;

/// Writes buffer `index` of `memory`, whose elements are of type `element`,
/// to `out` in `format`.
pub fn write_buffer(
    memory: &GlobalMemory,
    index: usize,
    element: ElementType,
    format: DumpFormat,
    out: &mut impl Write,
) -> io::Result<()> {
    let len = memory.buffer_len(index);
    if format == DumpFormat::Npy {
        npy::write_header(out, npy::descr(element), len / element.size())?;
    }
    let mut piece = vec![0u8; PIECE_BYTES.min(len as usize)];
    let mut offset = 0;
    while offset < len {
        let count = memory.copy_out(index, offset, &mut piece);
        out.write_all(&piece[..count])?;
        offset += count as u64;
    }
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npy_dumps_read_back_with_their_values() {
        let values: Vec<u8> = [1.5f32, -2.0, 0.25]
            .iter()
            .flat_map(|value| value.to_le_bytes())
            .collect();
        let mut memory = GlobalMemory::new();
        let index = memory.add_buffer("b", &values);
        let mut file = Vec::new();
        write_buffer(&memory, index, ElementType::F32, DumpFormat::Npy, &mut file).unwrap();
        let header = npy::read_header(&mut &file[..]).unwrap();
        assert_eq!(header.descr, "<f4");
        assert_eq!(header.shape, [3]);
        assert_eq!(&file[header.data_offset as usize..], &values[..]);
        let mut raw = Vec::new();
        write_buffer(&memory, index, ElementType::F32, DumpFormat::Raw, &mut raw).unwrap();
        assert_eq!(raw, values);
    }

    #[test]
    fn the_extension_chooses_the_format() {
        assert_eq!(DumpFormat::for_path(Path::new("a/c.npy")), DumpFormat::Npy);
        assert_eq!(DumpFormat::for_path(Path::new("C.NPY")), DumpFormat::Npy);
        assert_eq!(DumpFormat::for_path(Path::new("c.bin")), DumpFormat::Raw);
        assert_eq!(DumpFormat::for_path(Path::new("npy")), DumpFormat::Raw);
    }
}
