import Foundation
import ShelfTestSupport
import Testing

/// Every fuzz target's seeds and every input a fuzz run ever found (`Tests/Fuzz`) replayed through
/// `shelf-fuzz` as the ordinary build makes it: each must pass its target's checks, so a fixed
/// finding stays fixed.
@Suite struct FuzzReplayTests {
    static let fuzz = ChildProcess.productsDirectory().appendingPathComponent("shelf-fuzz")
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fuzz")

    @Test func everySeedAndEveryFindingPassesItsTarget() throws {
        let listed = try ChildProcess.run(Self.fuzz, ["--list"])
        try #require(listed.status == 0, "\(listed.stderr)")
        let targets = listed.stdout.split(separator: "\n").map(String.init)
        #expect(targets.count >= 18)
        for target in targets {
            let folders = ["corpus", "crashes"].map { Self.root.appendingPathComponent($0).appendingPathComponent(target).path }
                .filter { FileManager.default.fileExists(atPath: $0) }
            #expect(folders.contains { $0.contains("/corpus/") }, "\(target) has no seeds")
            let run = try ChildProcess.run(Self.fuzz, [target] + folders)
            #expect(run.status == 0, "\(target): \(run.stderr)")
            #expect(run.stdout.contains("replayed"), "\(target): \(run.stdout)")
        }
        // A target's check does fail: an input that breaks no parser's rule is not what this shows.
        #expect(try ChildProcess.run(Self.fuzz, ["no-such-target"]).status == 2)
    }
}
