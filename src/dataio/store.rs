//! Object storage behind one blocking API: a local directory, `file://`, `s3://`, `gs://`,
//! `az://` (also `abfs://`, `azure://`) and `memory://`, all through the `object_store` crate.
//!
//! Why a blocking wrapper: the rest of bao-zero is synchronous (rayon, libtorch); a fleet
//! worker or trainer does one storage call at a time between long computations, so a small
//! current-thread tokio runtime per [`Store`] is all the asynchrony it needs.
//!
//! Guarantees the fleet relies on (see `training::fleet`):
//! - a put is all-or-nothing: readers see the whole object or none (single-request PUT on
//!   S3/GCS/Azure; temporary file + rename on local disks, whose staging names listings skip);
//! - [`Store::put_immutable`] creates an object once (`PutMode::Create`); re-uploading the
//!   same bytes is not an error, other bytes are;
//! - transient errors are retried with exponential backoff ([`RetryPolicy`]), then returned,
//!   so a command exits non-zero and its orchestrator restarts it.
//!
//! Credentials and endpoints for cloud stores come from the usual environment variables
//! (`AWS_ACCESS_KEY_ID`, `AWS_ENDPOINT`, `AWS_ALLOW_HTTP`, `GOOGLE_SERVICE_ACCOUNT`,
//! `AZURE_STORAGE_ACCOUNT_NAME`, ...), read by the `object_store` builders' `from_env`.
//!
//! `memory://NAME` stores live in this process only (one per NAME, shared by every `Store`
//! opened on it): for tests that run workers and a trainer in threads.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use anyhow::{bail, Context};
use futures::TryStreamExt;
use object_store::memory::InMemory;
use object_store::path::Path as ObjPath;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload};

/// How often and how patiently storage calls are retried.
#[derive(Clone, Copy, Debug)]
pub struct RetryPolicy {
    /// Tries in all (1 = no retry).
    pub attempts: u32,
    /// Wait before the first retry; doubled each time up to `max_delay`.
    pub first_delay: Duration,
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    /// 6 tries over about 30 s; `BAO_STORE_RETRIES` overrides the number of tries.
    fn default() -> RetryPolicy {
        let attempts = std::env::var("BAO_STORE_RETRIES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(6u32)
            .max(1);
        RetryPolicy {
            attempts,
            first_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(16),
        }
    }
}

/// One stored object as listed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Key relative to the store's root, `/`-separated.
    pub key: String,
    pub size: u64,
    /// Seconds since the Unix epoch.
    pub modified_unix: i64,
}

/// What [`Store::put_immutable`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Put {
    Created,
    /// The object was there already with exactly these bytes (an idempotent re-upload).
    AlreadyThere,
}

/// An object existing with other bytes than an immutable put wanted to write.
#[derive(Debug, thiserror::Error)]
#[error("{0} already exists with different content (immutable objects are written once)")]
pub struct Conflict(pub String);

/// A root URL in object storage, opened for blocking use.
pub struct Store {
    inner: Arc<dyn ObjectStore>,
    prefix: Vec<String>,
    url: String,
    rt: tokio::runtime::Runtime,
    retry: RetryPolicy,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("url", &self.url).finish()
    }
}

fn memory_registry() -> &'static Mutex<HashMap<String, Arc<InMemory>>> {
    static REGISTRY: OnceLock<Mutex<HashMap<String, Arc<InMemory>>>> = OnceLock::new();
    REGISTRY.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Whether `s` names a URL (`scheme://...`) rather than a local path.
pub fn is_url(s: &str) -> bool {
    s.split_once("://").is_some_and(|(scheme, _)| {
        !scheme.is_empty() && scheme.chars().all(|c| c.is_ascii_alphanumeric())
    })
}

impl Store {
    /// Opens `root`: a URL (`s3://bucket/prefix`, `gs://...`, `az://container/prefix`,
    /// `file:///abs/dir`, `memory://name/prefix`) or a local directory path (created if
    /// missing).
    pub fn open(root: &str) -> anyhow::Result<Store> {
        Store::open_with(root, RetryPolicy::default())
    }

    pub fn open_with(root: &str, retry: RetryPolicy) -> anyhow::Result<Store> {
        let root = root.trim_end_matches('/');
        anyhow::ensure!(!root.is_empty(), "empty storage root");
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("cannot start the storage runtime")?;
        if !is_url(root) {
            return Store::local(Path::new(root), root.to_string(), rt, retry);
        }
        let url = url::Url::parse(root).with_context(|| format!("invalid storage URL `{root}`"))?;
        let path_prefix = |u: &url::Url| -> Vec<String> {
            u.path()
                .split('/')
                .filter(|p| !p.is_empty())
                .map(str::to_string)
                .collect()
        };
        let http_retry = object_store::RetryConfig {
            max_retries: retry.attempts.saturating_sub(1) as usize,
            retry_timeout: Duration::from_secs(60),
            backoff: object_store::BackoffConfig {
                init_backoff: retry.first_delay,
                max_backoff: retry.max_delay,
                base: 2.0,
            },
        };
        let (inner, prefix): (Arc<dyn ObjectStore>, Vec<String>) = match url.scheme() {
            "file" => {
                let path = url.to_file_path().map_err(|()| anyhow::anyhow!("`{root}` is not a local file URL"))?;
                return Store::local(&path, root.to_string(), rt, retry);
            }
            "memory" => {
                let name = url.host_str().unwrap_or("").to_string();
                let store = memory_registry()
                    .lock()
                    .map_err(|_| anyhow::anyhow!("memory store registry poisoned"))?
                    .entry(name)
                    .or_insert_with(|| Arc::new(InMemory::new()))
                    .clone();
                (store, path_prefix(&url))
            }
            "s3" | "s3a" => {
                let s = object_store::aws::AmazonS3Builder::from_env()
                    .with_url(root)
                    .with_retry(http_retry)
                    .build()
                    .with_context(|| format!("cannot open {root} (S3 settings come from AWS_* variables)"))?;
                (Arc::new(s), path_prefix(&url))
            }
            "gs" => {
                let s = object_store::gcp::GoogleCloudStorageBuilder::from_env()
                    .with_url(root)
                    .with_retry(http_retry)
                    .build()
                    .with_context(|| format!("cannot open {root} (GCS settings come from GOOGLE_* variables)"))?;
                (Arc::new(s), path_prefix(&url))
            }
            "az" | "abfs" | "abfss" | "azure" | "adl" => {
                let s = object_store::azure::MicrosoftAzureBuilder::from_env()
                    .with_url(root)
                    .with_retry(http_retry)
                    .build()
                    .with_context(|| format!("cannot open {root} (Azure settings come from AZURE_* variables)"))?;
                // For az://container/prefix the container is the host; abfs URLs carry
                // it in the user part. Either way the key prefix is the path.
                (Arc::new(s), path_prefix(&url))
            }
            other => bail!("unsupported storage scheme `{other}://` in `{root}` (use a directory, file://, s3://, gs://, az:// or memory://)"),
        };
        Ok(Store {
            inner,
            prefix,
            url: root.to_string(),
            rt,
            retry,
        })
    }

    fn local(
        dir: &Path,
        url: String,
        rt: tokio::runtime::Runtime,
        retry: RetryPolicy,
    ) -> anyhow::Result<Store> {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create storage directory {}", dir.display()))?;
        let dir: PathBuf = dir
            .canonicalize()
            .with_context(|| format!("cannot resolve {}", dir.display()))?;
        let fs = object_store::local::LocalFileSystem::new_with_prefix(&dir)
            .with_context(|| format!("cannot open storage directory {}", dir.display()))?;
        Ok(Store {
            inner: Arc::new(fs),
            prefix: Vec::new(),
            url,
            rt,
            retry,
        })
    }

    /// The root this store was opened on, as given.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// `ROOT/key` for messages.
    pub fn describe(&self, key: &str) -> String {
        format!("{}/{key}", self.url)
    }

    fn path(&self, key: &str) -> anyhow::Result<ObjPath> {
        let mut parts = self.prefix.clone();
        parts.extend(key.split('/').filter(|p| !p.is_empty()).map(str::to_string));
        ObjPath::parse(parts.join("/")).with_context(|| format!("invalid object key `{key}`"))
    }

    fn relative(&self, path: &ObjPath) -> String {
        path.parts()
            .skip(self.prefix.len())
            .map(|p| p.as_ref().to_string())
            .collect::<Vec<_>>()
            .join("/")
    }

    /// Runs `op` with retries on transient errors (see [`RetryPolicy`]).
    fn retry<T, F, Fut>(&self, what: &str, mut op: F) -> Result<T, object_store::Error>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = Result<T, object_store::Error>>,
    {
        let mut delay = self.retry.first_delay;
        let mut attempt = 1;
        loop {
            match self.rt.block_on(op()) {
                Err(e) if attempt < self.retry.attempts && transient(&e) => {
                    tracing::warn!(
                        "{what}: {e}; retry {attempt}/{} in {delay:?}",
                        self.retry.attempts - 1
                    );
                    std::thread::sleep(delay);
                    delay = (delay * 2).min(self.retry.max_delay);
                    attempt += 1;
                }
                r => return r,
            }
        }
    }

    /// The object's bytes, or `None` when there is no such object.
    pub fn get_opt(&self, key: &str) -> anyhow::Result<Option<Vec<u8>>> {
        let path = self.path(key)?;
        let what = self.describe(key);
        let r = self.retry(&what, || async {
            self.inner.get(&path).await?.bytes().await
        });
        match r {
            Ok(b) => Ok(Some(b.to_vec())),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(e).with_context(|| format!("cannot read {what}")),
        }
    }

    /// The object's bytes; a missing object is an error naming it.
    pub fn get(&self, key: &str) -> anyhow::Result<Vec<u8>> {
        self.get_opt(key)?
            .with_context(|| format!("{} does not exist", self.describe(key)))
    }

    /// Bytes `range` of an object (e.g. a shard header).
    pub fn get_range(&self, key: &str, range: std::ops::Range<u64>) -> anyhow::Result<Vec<u8>> {
        let path = self.path(key)?;
        let what = self.describe(key);
        let b = self
            .retry(&what, || async {
                self.inner.get_range(&path, range.clone()).await
            })
            .with_context(|| format!("cannot read {what}"))?;
        Ok(b.to_vec())
    }

    /// Whether the object exists.
    pub fn exists(&self, key: &str) -> anyhow::Result<bool> {
        let path = self.path(key)?;
        let what = self.describe(key);
        match self.retry(&what, || async { self.inner.head(&path).await }) {
            Ok(_) => Ok(true),
            Err(object_store::Error::NotFound { .. }) => Ok(false),
            Err(e) => Err(e).with_context(|| format!("cannot look up {what}")),
        }
    }

    /// Writes (or replaces) an object, all or nothing. For objects with a single writer.
    pub fn put(&self, key: &str, bytes: &[u8]) -> anyhow::Result<()> {
        let path = self.path(key)?;
        let what = self.describe(key);
        let payload = PutPayload::from(bytes.to_vec());
        self.retry(&what, || async {
            self.inner.put(&path, payload.clone()).await
        })
        .with_context(|| format!("cannot write {what}"))?;
        Ok(())
    }

    /// Creates an object that must never change (`PutMode::Create`). If it exists with the
    /// same bytes this is a harmless re-upload ([`Put::AlreadyThere`]); with other bytes it
    /// fails with [`Conflict`].
    pub fn put_immutable(&self, key: &str, bytes: &[u8]) -> anyhow::Result<Put> {
        match self.put_create(key, bytes)? {
            Put::Created => Ok(Put::Created),
            Put::AlreadyThere => {
                let existing = self.get(key)?;
                if existing == bytes {
                    Ok(Put::AlreadyThere)
                } else {
                    Err(Conflict(self.describe(key)).into())
                }
            }
        }
    }

    /// Creates an object unless one exists (`PutMode::Create`), without comparing bytes:
    /// [`Put::AlreadyThere`] means someone else created it first.
    pub fn put_create(&self, key: &str, bytes: &[u8]) -> anyhow::Result<Put> {
        let path = self.path(key)?;
        let what = self.describe(key);
        let payload = PutPayload::from(bytes.to_vec());
        let opts = || PutOptions {
            mode: PutMode::Create,
            ..Default::default()
        };
        match self.retry(&what, || async {
            self.inner.put_opts(&path, payload.clone(), opts()).await
        }) {
            Ok(_) => Ok(Put::Created),
            Err(object_store::Error::AlreadyExists { .. }) => Ok(Put::AlreadyThere),
            // A retried create whose first try landed comes back as a precondition failure
            // on some stores; the caller compares bytes when it matters.
            Err(object_store::Error::Precondition { .. }) => Ok(Put::AlreadyThere),
            Err(e) => Err(e).with_context(|| format!("cannot create {what}")),
        }
    }

    /// Deletes an object (no error when it is already gone).
    pub fn delete(&self, key: &str) -> anyhow::Result<()> {
        let path = self.path(key)?;
        let what = self.describe(key);
        match self.retry(&what, || async { self.inner.delete(&path).await }) {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(e).with_context(|| format!("cannot delete {what}")),
        }
    }

    /// Every object under `prefix` (a key prefix ending at a `/` boundary, e.g. `shards`),
    /// recursively, sorted by key.
    pub fn list(&self, prefix: &str) -> anyhow::Result<Vec<Entry>> {
        let path = self.path(prefix)?;
        let what = self.describe(prefix);
        let metas = self
            .retry(&what, || async {
                self.inner.list(Some(&path)).try_collect::<Vec<_>>().await
            })
            .with_context(|| format!("cannot list {what}"))?;
        let mut out: Vec<Entry> = metas
            .into_iter()
            .map(|m| Entry {
                key: self.relative(&m.location),
                size: m.size,
                modified_unix: m.last_modified.timestamp(),
            })
            .collect();
        out.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(out)
    }
}

/// Errors worth another try: network trouble and server hiccups, not answers.
fn transient(e: &object_store::Error) -> bool {
    !matches!(
        e,
        object_store::Error::NotFound { .. }
            | object_store::Error::AlreadyExists { .. }
            | object_store::Error::Precondition { .. }
            | object_store::Error::NotModified { .. }
            | object_store::Error::NotImplemented { .. }
            | object_store::Error::NotSupported { .. }
            | object_store::Error::InvalidPath { .. }
            | object_store::Error::PermissionDenied { .. }
            | object_store::Error::Unauthenticated { .. }
            | object_store::Error::UnknownConfigurationKey { .. }
    )
}

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    format!("{:x}", sha2::Sha256::digest(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stores() -> Vec<(Store, tempfile::TempDir)> {
        let dir = tempfile::tempdir().unwrap();
        let local = Store::open(dir.path().join("root").to_str().unwrap()).unwrap();
        let name = format!("memory://store-test-{}/run", std::process::id());
        vec![
            (local, tempfile::tempdir().unwrap()),
            (Store::open(&name).unwrap(), dir),
        ]
    }

    #[test]
    fn put_get_list_delete() {
        for (s, _keep) in stores() {
            assert_eq!(s.get_opt("a/b.bin").unwrap(), None);
            s.put("a/b.bin", b"one").unwrap();
            s.put("a/c/d.bin", b"two").unwrap();
            s.put("z.bin", b"three").unwrap();
            assert_eq!(s.get("a/b.bin").unwrap(), b"one");
            assert_eq!(s.get_range("z.bin", 1..3).unwrap(), b"hr");
            let keys: Vec<String> = s.list("a").unwrap().into_iter().map(|e| e.key).collect();
            assert_eq!(keys, vec!["a/b.bin", "a/c/d.bin"]);
            assert_eq!(s.list("a").unwrap()[0].size, 3);
            assert!(s.exists("z.bin").unwrap());
            s.delete("z.bin").unwrap();
            s.delete("z.bin").unwrap();
            assert!(!s.exists("z.bin").unwrap());
            assert!(s.list("nothing").unwrap().is_empty());
            let e = s.get("z.bin").unwrap_err().to_string();
            assert!(e.contains("z.bin") && e.contains("does not exist"), "{e}");
        }
    }

    #[test]
    fn immutable_puts_are_idempotent_and_refuse_other_bytes() {
        for (s, _keep) in stores() {
            assert_eq!(
                s.put_immutable("m/gen.bin", b"weights").unwrap(),
                Put::Created
            );
            assert_eq!(
                s.put_immutable("m/gen.bin", b"weights").unwrap(),
                Put::AlreadyThere
            );
            let e = s.put_immutable("m/gen.bin", b"other").unwrap_err();
            assert!(e.downcast_ref::<Conflict>().is_some(), "{e:#}");
            assert_eq!(s.get("m/gen.bin").unwrap(), b"weights");
            assert_eq!(s.put_create("m/gen.bin", b"x").unwrap(), Put::AlreadyThere);
        }
    }

    #[test]
    fn memory_stores_are_shared_by_name_and_prefixes_separate() {
        let name = format!("memory://shared-{}", std::process::id());
        let a = Store::open(&format!("{name}/one")).unwrap();
        let b = Store::open(&format!("{name}/one/")).unwrap();
        let c = Store::open(&format!("{name}/two")).unwrap();
        a.put("k", b"v").unwrap();
        assert_eq!(b.get("k").unwrap(), b"v");
        assert_eq!(c.get_opt("k").unwrap(), None);
        assert_eq!(b.list("").unwrap()[0].key, "k");
    }

    #[test]
    fn urls_and_paths() {
        assert!(is_url("s3://b/p") && is_url("memory://x") && is_url("file:///tmp"));
        assert!(!is_url("/tmp/run") && !is_url("runs/a") && !is_url("://x"));
        let e = Store::open("ftp://host/x").unwrap_err().to_string();
        assert!(e.contains("unsupported storage scheme"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let url = format!("file://{}", dir.path().display());
        let s = Store::open(&url).unwrap();
        s.put("x/y", b"1").unwrap();
        assert_eq!(std::fs::read(dir.path().join("x/y")).unwrap(), b"1");
    }

    #[test]
    fn sha256_matches_a_known_digest() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
