"""The one place that reads and writes zotrec's cache and data files.

- `digest(*parts) -> str`: a key. Pass a format version first, then the data the value depends on
  (arrays by dtype, shape and bytes; str, int, float by repr; bytes; tuples and lists): never a
  source path. Changing what a value means? Bump that format version.
- `Store(folder, keep=None).memo(name, key, compute)`: the value stored under (name, key), else
  `compute()` (one array or a dict of arrays), stored and returned. `load`/`save` for values that are
  checked on the way in. `name`: lower-case words joined by '-'; `key`: a digest.
- Files: `write_atomic` (the one atomic writer; `write_bytes`, `write_npz` on it), `read_npz` and `npz_array`
  (the safe readers: no pickle, declared sizes checked first), `read_private` / `prepare_private_file` /
  `check_private` (a config, key or cache file must be the user's own and writable by no one else).
- Folders: `cache_dir()` ($ZOTREC_CACHE_DIR), `data_dir()` ($ZOTREC_DATA_DIR), `private_dir(folder)`,
  `make_folders(folder)` (missing folders of an output, made 0700).

The rules: folders are 0700 and files 0600 whatever the umask; a link where a cache file or folder
should be is replaced, never written or chmod-ed through; a damaged, empty or unreadable entry is a
miss, rebuilt with one notice; a folder that cannot be written (read-only, full) means computing
without storing, with one notice naming the folder for the whole run.
"""

from recommender.store.files import (Damaged, NotPrivate, check_private, npz_array, prepare_private_file, read_npz,
                                   read_private, write_atomic, write_bytes, write_npz)
from recommender.store.keys import code_fingerprint, digest
from recommender.store.memo import Store
from recommender.store.paths import CACHE_DIR_ENV, DATA_DIR_ENV, cache_dir, data_dir, make_folders, private_dir

__all__ = ["CACHE_DIR_ENV", "DATA_DIR_ENV", "Damaged", "NotPrivate", "Store", "cache_dir", "check_private",
           "code_fingerprint", "data_dir", "digest", "make_folders", "npz_array", "prepare_private_file", "private_dir",
           "read_npz", "read_private", "write_atomic", "write_bytes", "write_npz"]
