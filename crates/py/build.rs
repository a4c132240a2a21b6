//! Records the compiler's version, which `ccarena._core.__rustc__` reports (provenance.json).

fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let version = std::process::Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=CCARENA_RUSTC_VERSION={version}");
    println!("cargo:rerun-if-changed=build.rs");
}
