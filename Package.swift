// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Majlis",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .executable(name: "majlis", targets: ["majlis"]),
        .executable(name: "majlis-bench", targets: ["majlis-bench"]),
        .library(name: "MajlisProtocol", targets: ["MajlisProtocol"]),
        .library(name: "MajlisPacks", targets: ["MajlisPacks"]),
        .library(name: "MajlisRoom", targets: ["MajlisRoom"]),
        .library(name: "MajlisServer", targets: ["MajlisServer"]),
        .library(name: "MajlisKit", targets: ["MajlisKit"]),
        .library(name: "MajlisAudio", targets: ["MajlisAudio"]),
        .library(name: "MajlisTransport", targets: ["MajlisTransport"]),
        .library(name: "MajlisForwarding", targets: ["MajlisForwarding"]),
    ],
    targets: [
        // C libraries from the system, one target each.
        .systemLibrary(
            name: "CLibWebSockets", pkgConfig: "libwebsockets",
            providers: [.apt(["libwebsockets-dev"]), .brew(["libwebsockets"])]),
        .systemLibrary(
            name: "CCrypto", pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"]), .brew(["openssl"])]),
        .systemLibrary(
            name: "CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]),
        .systemLibrary(
            name: "CPostgres", pkgConfig: "libpq", providers: [.apt(["libpq-dev"]), .brew(["libpq"])]),
        // hiredis's pkg-config file adds -D_FILE_OFFSET_BITS=64, a flag SwiftPM refuses (with a
        // warning): its headers are found in the system include path without it.
        .systemLibrary(name: "CRedis", providers: [.apt(["libhiredis-dev"]), .brew(["hiredis"])]),
        .systemLibrary(
            name: "CSRTP", pkgConfig: "libsrtp2", providers: [.apt(["libsrtp2-dev"]), .brew(["srtp"])]),
        .systemLibrary(
            name: "COpus", pkgConfig: "opus", providers: [.apt(["libopus-dev"]), .brew(["opus"])]),
        .systemLibrary(
            name: "CSampleRate", pkgConfig: "samplerate", providers: [.apt(["libsamplerate0-dev"]), .brew(["libsamplerate"])]),
        // The desktop's sound server (PulseAudio, or PipeWire's PulseAudio service), for the
        // terminal client's microphone and speakers. Headers in /usr/include (libpulse-dev); no
        // pkg-config: its -pthread and -D_REENTRANT flags are refused by SwiftPM.
        .systemLibrary(name: "CPulse"),
        // Music and sound-effect files: WAV, FLAC, Ogg (Opus, Vorbis) and MP3 through libsndfile.
        .systemLibrary(name: "CSndFile", pkgConfig: "sndfile", providers: [.apt(["libsndfile1-dev"]), .brew(["libsndfile"])]),
        // MP3 decoded by libmpg123 itself (libsndfile's own use of it prints its notes on a
        // damaged file to standard error, with no way to quiet them).
        .systemLibrary(name: "CMPG123", pkgConfig: "libmpg123", providers: [.apt(["libmpg123-dev"]), .brew(["mpg123"])]),
        // Spatial sound: head-related transfer functions from SOFA files (libmysofa; Debian's
        // libmysofa1 ships MIT's KEMAR set).
        .systemLibrary(name: "CMySofa", pkgConfig: "libmysofa", providers: [.apt(["libmysofa-dev"])]),
        // The client's audio pipeline: SoundTouch's C interface (pitch); WebRTC's audio
        // processing 0.3 (voice detection; C++) is wrapped by the target CVoiceProcessing below.
        .systemLibrary(name: "CSoundTouch", providers: [.apt(["libsoundtouch-dev"]), .brew(["sound-touch"])]),
        // glibc's malloc_trim, to hand memory back after bursts.
        .systemLibrary(name: "CMalloc"),
        .systemLibrary(name: "CZlib", providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]),
        // Macros and inline helpers of libwebsockets that Swift cannot import.
        // libev (a dependency of Debian's libwebsockets-dev) gives each context an epoll loop.
        .target(
            name: "CWebSocketsShim", dependencies: ["CLibWebSockets"],
            linkerSettings: [.linkedLibrary("ev", .when(platforms: [.linux]))]),

        // HTTP requests through libcurl (already linked by Foundation's URLSession), for a client
        // that trusts one certificate: URLSession on Linux offers no way to.
        .target(
            name: "CHTTPShim", dependencies: ["CWebSocketsShim"],
            linkerSettings: [.linkedLibrary("curl"), .linkedLibrary("ssl"), .linkedLibrary("crypto")]),

        .target(name: "MajlisProtocol"),
        .target(name: "MajlisRoom", dependencies: ["MajlisProtocol"]),
        .target(name: "MajlisPacks", dependencies: ["CZlib", .target(name: "CCrypto", condition: .when(platforms: [.linux]))]),
        .target(name: "COpusShim", dependencies: ["COpus"]),
        .target(name: "CNetShim"),
        // DTLS-SRTP over OpenSSL's libssl, behind a small C interface.
        .target(name: "CDTLS", linkerSettings: [.linkedLibrary("ssl"), .linkedLibrary("crypto")]),
        // Its headers come through the link `webrtc` to Debian's /usr/include/webrtc_audio_processing
        // (its pkg-config flags carry defines, which SwiftPM refuses with a warning).
        .target(
            name: "CVoiceProcessing",
            cxxSettings: [.headerSearchPath("."), .define("WEBRTC_POSIX"), .define("WEBRTC_AUDIO_PROCESSING_ONLY_BUILD")],
            linkerSettings: [.linkedLibrary("webrtc_audio_processing")]),
        .target(
            name: "MajlisAudio",
            dependencies: [
                "MajlisProtocol", "COpus", "COpusShim", "CSampleRate", "CVoiceProcessing", "CSoundTouch", "CSndFile", "CMPG123", "CMySofa",
                .target(name: "CPulse", condition: .when(platforms: [.linux])),
            ]),
        .target(
            name: "MajlisTransport",
            dependencies: ["MajlisProtocol", "CLibWebSockets", "CWebSocketsShim", "CCrypto", "CSRTP", "CNetShim"]),
        // The server's side of media: the forwarding core and WebRTC's server end (ICE-lite,
        // DTLS-SRTP). Apart from the transport the SDK links, so an app does not carry the SFU.
        .target(name: "MajlisForwarding", dependencies: ["MajlisProtocol", "MajlisTransport", "CDTLS"]),
        // The web app and the API document, built into the server (a copied binary serves them).
        .executableTarget(name: "EmbedFilesTool"),
        .plugin(name: "EmbedFiles", capability: .buildTool(), dependencies: ["EmbedFilesTool"]),
        .target(
            name: "MajlisServer",
            dependencies: ["MajlisProtocol", "MajlisRoom", "MajlisTransport", "MajlisForwarding", "MajlisPacks", "CSQLite", "CPostgres", "CRedis", "CMalloc"],
            plugins: ["EmbedFiles"]),
        // The SDK: its live signaling client and media engine run on libwebsockets, libsrtp2 and
        // libopus on Linux (MajlisTransport, MajlisAudio); everything else is platform-neutral.
        .target(
            name: "MajlisKit",
            dependencies: [
                "MajlisProtocol",
                "MajlisPacks",
                .target(name: "MajlisTransport", condition: .when(platforms: [.linux])),
                .target(name: "MajlisAudio", condition: .when(platforms: [.linux])),
                .target(name: "CHTTPShim", condition: .when(platforms: [.linux])),
            ]),
        .target(
            name: "MajlisTestSupport",
            dependencies: ["MajlisProtocol", "MajlisServer", "MajlisTransport"]),
        .target(
            name: "MajlisLab",
            dependencies: ["MajlisProtocol", "MajlisServer", "MajlisTransport", "MajlisForwarding", "MajlisKit", "MajlisAudio", "MajlisTestSupport"]),
        .executableTarget(
            name: "majlis",
            dependencies: ["MajlisProtocol", "MajlisServer", "MajlisForwarding", "MajlisTransport", "MajlisKit", "MajlisAudio", "MajlisCommandLine"]),
        // What the command line's programs share: flags, output, the server API's client.
        .target(name: "MajlisCommandLine", dependencies: ["MajlisProtocol", "CHTTPShim", "CWebSocketsShim"]),
        // The benchmarks, a program of their own (`majlis bench` runs it) so that `majlis` does
        // not link the harness they drive.
        .executableTarget(
            name: "majlis-bench",
            dependencies: [
                "MajlisProtocol", "MajlisServer", "MajlisForwarding", "MajlisTransport", "MajlisKit", "MajlisAudio", "MajlisLab", "MajlisCommandLine", "MajlisPacks",
                "MajlisTestSupport",
            ]),

        .testTarget(name: "MajlisProtocolTests", dependencies: ["MajlisProtocol"]),
        .testTarget(name: "MajlisPacksTests", dependencies: ["MajlisPacks", "MajlisTestSupport"]),
        // docs/sdk.md's examples, built as an app builds them: MajlisKit alone.
        .testTarget(name: "MajlisKitExampleTests", dependencies: ["MajlisKit"]),
        .testTarget(name: "MajlisRoomTests", dependencies: ["MajlisRoom", "MajlisProtocol"]),
        .testTarget(name: "MajlisAudioTests", dependencies: ["MajlisAudio", "MajlisProtocol", "MajlisLab", "MajlisTestSupport"]),
        .testTarget(name: "MajlisTransportTests", dependencies: ["MajlisTransport", "MajlisProtocol", "MajlisTestSupport", "CCrypto"]),
        .testTarget(name: "MajlisForwardingTests", dependencies: ["MajlisForwarding", "MajlisTransport", "MajlisProtocol", "MajlisTestSupport", "CCrypto"]),
        // The command line's pure parts: keyboard decoding and the terminal screen's layout.
        .testTarget(name: "MajlisCommandTests", dependencies: ["majlis", "MajlisKit"]),
        .testTarget(
            name: "MajlisKitTests",
            dependencies: ["MajlisKit", "MajlisProtocol", "MajlisPacks", "MajlisServer", "MajlisTestSupport", "MajlisAudio", "MajlisLab", "MajlisTransport"]),
        .testTarget(
            name: "MajlisServerTests",
            dependencies: [
                "MajlisServer", "MajlisRoom", "MajlisTransport", "MajlisForwarding", "MajlisProtocol", "MajlisPacks", "MajlisTestSupport", "MajlisAudio", "MajlisLab",
            ]),
    ],
    swiftLanguageModes: [.v6]
)
