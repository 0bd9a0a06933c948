// swift-tools-version:6.0
import PackageDescription

// libFuzzer targets for what Majlis reads from the network. Built only by scripts/fuzz
// (`-sanitize=fuzzer,address`), which runs each through libFuzzer's driver.
let package = Package(
    name: "MajlisFuzz",
    dependencies: [.package(name: "Majlis", path: "..")],
    targets: [
        .target(name: "FuzzDriver"),
        .executableTarget(name: "FuzzRequest", dependencies: ["FuzzDriver", .product(name: "MajlisProtocol", package: "Majlis")]),
        .executableTarget(name: "FuzzJSON", dependencies: ["FuzzDriver", .product(name: "MajlisProtocol", package: "Majlis")]),
        .executableTarget(
            name: "FuzzHTTP", dependencies: ["FuzzDriver", .product(name: "MajlisTransport", package: "Majlis")]),
        .executableTarget(name: "FuzzMediaPackets", dependencies: ["FuzzDriver", .product(name: "MajlisProtocol", package: "Majlis")]),
        .executableTarget(
            name: "FuzzSRTP",
            dependencies: [
                "FuzzDriver", .product(name: "MajlisProtocol", package: "Majlis"), .product(name: "MajlisTransport", package: "Majlis"),
            ]),
        .executableTarget(
            name: "FuzzWebRTC",
            dependencies: [
                "FuzzDriver", .product(name: "MajlisProtocol", package: "Majlis"), .product(name: "MajlisTransport", package: "Majlis"),
                .product(name: "MajlisForwarding", package: "Majlis"),
            ]),
    ]
)
