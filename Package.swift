// swift-tools-version:6.0
// Shelf: a Swift engine for local music libraries. Depends only on the toolchain and on
// Debian's C libraries (see the Makefile's `deps`), because outside packages cannot be fetched.
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "Shelf",
    products: [
        .library(name: "Shelf", targets: ["Shelf"]),
        .executable(name: "shelf", targets: ["ShelfCLI"]),
        .executable(name: "shelf-bench", targets: ["ShelfBench"]),
        .executable(name: "shelf-fuzz", targets: ["ShelfFuzz"]),
    ],
    targets: [
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CCrypto", path: "Sources/CCrypto", providers: [.apt(["libssl-dev"])]),
        // EBU R128 loudness and true peak (libebur128), for measuring tracks without ReplayGain.
        .systemLibrary(name: "CEBUR128", path: "Sources/CEBUR128", providers: [.apt(["libebur128-dev"])]),
        // OpenLDAP's client library, for `ldap-url` sign-in.
        .systemLibrary(name: "CLDAP", path: "Sources/CLDAP", providers: [.apt(["libldap-dev"])]),
        // libjpeg-turbo and libpng behind a small C API that catches their longjmp errors.
        .target(
            name: "CImageCodecs", path: "Sources/CImageCodecs",
            linkerSettings: [.linkedLibrary("jpeg"), .linkedLibrary("png16"), .linkedLibrary("webp")]),
        // TagLib (C++) behind a C API that never lets an exception cross into Swift.
        .target(
            name: "CTagLib", path: "Sources/CTagLib",
            linkerSettings: [.linkedLibrary("tag"), .linkedLibrary("z"), .linkedLibrary("stdc++")]),
        // libmicrohttpd behind a small C API: its variadic start call and its callbacks, bridged once.
        .target(
            name: "CMicroHTTPD", path: "Sources/CMicroHTTPD",
            linkerSettings: [.linkedLibrary("microhttpd")]),
        // libcurl behind one call that fetches a URL within the limits of a server fetching strangers' URLs (podcasts).
        .target(
            name: "CCurl", path: "Sources/CCurl",
            linkerSettings: [.linkedLibrary("curl")]),
        // Listening to a track: FFmpeg's libraries decode it, FFTW3 transforms it, into the sonic
        // descriptors (and the similarity scan). Optimised in every build: the tests analyse real
        // files in debug builds, and unoptimised DSP would be most of their time.
        .target(
            name: "CSonic", path: "Sources/CSonic",
            cSettings: [
                .unsafeFlags(["-O2", "-fno-math-errno", "-fassociative-math", "-fno-signed-zeros", "-fno-trapping-math", "-ffp-contract=fast"])
            ],
            linkerSettings: [
                .linkedLibrary("avformat"), .linkedLibrary("avcodec"), .linkedLibrary("avutil"), .linkedLibrary("swresample"),
                .linkedLibrary("fftw3f"), .linkedLibrary("m"),
            ]),
        // The git commit a build came from (written by `make`, "unknown" without it) for `--version`.
        .target(name: "CShelfBuild", path: "Sources/CShelfBuild"),
        // glibc's allocator knobs (<malloc.h>), which `shelf serve` turns.
        .target(name: "CMemory", path: "Sources/CMemory"),
        // libFuzzer's driver when linked in (make fuzz), a corpus replayer otherwise.
        .target(name: "CFuzzDriver", path: "Sources/CFuzzDriver"),
        .target(name: "ShelfDatabase", dependencies: ["CSQLite"], swiftSettings: swiftSettings),
        .target(name: "ShelfCore", swiftSettings: swiftSettings),
        .target(
            name: "Shelf", dependencies: ["ShelfDatabase", "ShelfCore", "CCrypto", "CEBUR128", "CImageCodecs", "CTagLib", "CSonic"],
            swiftSettings: swiftSettings),
        // The JSON documents `shelf --json` prints and `/api/` answers: one set of encoders for both.
        .target(name: "ShelfWire", dependencies: ["Shelf", "ShelfCore"], swiftSettings: swiftSettings),
        // The web page's files are compiled into the binary (`embedInCode`), so `shelf` alone serves them.
        .target(
            name: "ShelfServer", dependencies: ["Shelf", "ShelfCore", "ShelfWire", "CMicroHTTPD", "CCurl", "CLDAP", "CMemory"],
            resources: [.embedInCode("Web/files")], swiftSettings: swiftSettings),
        .executableTarget(
            name: "ShelfCLI", dependencies: ["Shelf", "ShelfCore", "ShelfWire", "ShelfServer", "CShelfBuild", "CMemory"], swiftSettings: swiftSettings),
        .target(name: "ShelfTestSupport", dependencies: ["Shelf", "ShelfCore"], swiftSettings: swiftSettings),
        .executableTarget(
            name: "ShelfBench", dependencies: ["Shelf", "ShelfCore", "ShelfWire", "ShelfTestSupport", "ShelfDatabase", "CShelfBuild"],
            swiftSettings: swiftSettings),
        .executableTarget(
            name: "ShelfFuzz", dependencies: ["Shelf", "ShelfCore", "ShelfServer", "CFuzzDriver"], swiftSettings: swiftSettings),
        .testTarget(name: "ShelfDatabaseTests", dependencies: ["ShelfDatabase"], swiftSettings: swiftSettings),
        .testTarget(name: "ShelfCoreTests", dependencies: ["ShelfCore"], swiftSettings: swiftSettings),
        .testTarget(
            name: "ShelfTests", dependencies: ["Shelf", "ShelfCore", "ShelfDatabase", "ShelfTestSupport"],
            exclude: ["Fixtures"], swiftSettings: swiftSettings),
        .testTarget(
            name: "ShelfServerTests", dependencies: ["ShelfServer", "Shelf", "ShelfCore", "ShelfTestSupport"],
            exclude: ["Snapshots"], swiftSettings: swiftSettings),
        .testTarget(
            name: "ShelfWireTests", dependencies: ["ShelfWire", "Shelf", "ShelfCore", "ShelfTestSupport"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "ShelfCLITests", dependencies: ["ShelfCLI", "ShelfBench", "ShelfTestSupport", "ShelfDatabase", "CMemory"],
            swiftSettings: swiftSettings),
    ],
    cxxLanguageStandard: .cxx17
)
