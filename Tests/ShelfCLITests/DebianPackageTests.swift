import Foundation
import ShelfTestSupport
import Testing

/// The `.deb`: `scripts/make-deb.sh` packages the built `shelf` (linked with the Swift runtime
/// statically: `make test` relinks it so) and `scripts/deb-check.sh` lints it with lintian,
/// installs it with dpkg, runs it with the toolchain out of reach, and removes and purges it.
@Suite struct DebianPackageTests {
    let products = ChildProcess.productsDirectory()
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func thePackageLintsInstallsRunsAndRemovesCleanly() async throws {
        try await offCooperativePool {
            let tools = ["/usr/bin/dpkg-deb", "/usr/bin/lintian", "/usr/bin/dpkg-shlibdeps"]
            guard getuid() == 0, tools.allSatisfy({ FileManager.default.isExecutableFile(atPath: $0) }) else {
                print("skipped: the package test installs a package, so it needs root and \(tools.joined(separator: ", ")) (make deps)")
                return
            }
            let binary = products.appendingPathComponent("shelf")
            let linked = try ChildProcess.run(URL(fileURLWithPath: "/usr/bin/ldd"), [binary.path])
            guard !linked.stdout.contains("libswiftCore") else {
                print("skipped: \(binary.path) loads the Swift runtime from the toolchain; `make test` relinks it with --static-swift-stdlib first")
                return
            }
            let dir = try TemporaryDirectory()
            let made = try ChildProcess.run(root.appendingPathComponent("scripts/make-deb.sh"), [binary.path, dir.url.path])
            #expect(made.status == 0, "make-deb.sh: \(made.stderr)")
            let deb = made.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(deb.hasSuffix(".deb") && FileManager.default.fileExists(atPath: deb), "\(made.stdout)")
            let checked = try ChildProcess.run(root.appendingPathComponent("scripts/deb-check.sh"), [deb])
            #expect(checked.status == 0, "deb-check.sh:\n\(checked.stdout)\n\(checked.stderr)")
            #expect(checked.stdout.contains("ok: lintian"), "\(checked.stdout)")
        }
    }
}
