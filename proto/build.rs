//! Compiles gops.proto with protox (a pure-Rust protobuf compiler: no system protoc)
//! and generates the tonic client and server.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=gops.proto");
    let descriptors = protox::compile(["gops.proto"], ["."])?;
    // the codec checks each message's wire bytes against a bound before decoding them
    tonic_prost_build::configure()
        .codec_path("crate::codec::BoundedCodec")
        .compile_fds(descriptors)?;
    Ok(())
}
