//! Compiles gops.proto with protox (a pure-Rust protobuf compiler: no system protoc)
//! and generates the tonic client and server.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=gops.proto");
    let descriptors = protox::compile(["gops.proto"], ["."])?;
    tonic_prost_build::configure().compile_fds(descriptors)?;
    Ok(())
}
