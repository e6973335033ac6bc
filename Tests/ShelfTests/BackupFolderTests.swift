import Foundation
import Shelf
import ShelfTestSupport
import Testing

/// A folder of scheduled backups: names that sort by time, a list that reads each file (and
/// survives one it cannot read), and a rotation that keeps the newest by name and nothing else.
@Suite struct BackupFolderTests {
    @Test func namesAreUTCStampsThatAvoidEachOther() throws {
        let dir = try TemporaryDirectory()
        let date = Date(timeIntervalSince1970: 1_796_321_700)  // 2026-12-03 18:15:00 UTC
        #expect(BackupFolder.fileName(for: date) == "shelf-20261203-181500.shelfbackup")
        #expect(BackupFolder.newFile(in: dir.url, for: date).lastPathComponent == "shelf-20261203-181500.shelfbackup")
        try Data().write(to: dir.path("shelf-20261203-181500.shelfbackup"))
        #expect(BackupFolder.newFile(in: dir.url, for: date).lastPathComponent == "shelf-20261203-181500-2.shelfbackup")
        try Data().write(to: dir.path("shelf-20261203-181500-2.shelfbackup"))
        #expect(BackupFolder.newFile(in: dir.url, for: date).lastPathComponent == "shelf-20261203-181500-3.shelfbackup")
    }

    @Test func pruneKeepsTheNewestByNameAndLeavesOtherFilesAlone() throws {
        let dir = try TemporaryDirectory()
        let backups = [
            "shelf-20261201-000000.shelfbackup", "shelf-20261202-000000.shelfbackup", "shelf-20261202-000000-2.shelfbackup",
            "shelf-20261203-120000.shelfbackup",
        ]
        let others = ["notes.txt", "shelf-by-hand.shelfbackup", ".shelf-20261204-000000.shelfbackup.partial-ab12cd34", "shelf-20261205-000000.sqlite"]
        for name in backups + others { try Data("x".utf8).write(to: dir.path(name)) }
        // The times on disk say the opposite of the names: the names decide.
        for (index, name) in backups.enumerated() {
            try FileManager.default.setAttributes(
                [.modificationDate: Date(timeIntervalSince1970: 2_000_000_000 - Double(index) * 86_400)], ofItemAtPath: dir.path(name).path)
        }

        let deleted = try BackupFolder.prune(dir.url, keep: 2)
        #expect(deleted == ["shelf-20261202-000000.shelfbackup", "shelf-20261201-000000.shelfbackup"])
        let left = try FileManager.default.contentsOfDirectory(atPath: dir.url.path).sorted()
        #expect(left == (others + ["shelf-20261202-000000-2.shelfbackup", "shelf-20261203-120000.shelfbackup"]).sorted())
        // Nothing more to delete, and keeping more than there are deletes nothing.
        #expect(try BackupFolder.prune(dir.url, keep: 2).isEmpty)
        #expect(try BackupFolder.prune(dir.url, keep: 10).isEmpty)
        #expect(try BackupFolder.prune(dir.url, keep: 1) == ["shelf-20261202-000000-2.shelfbackup"])
        #expect(FileManager.default.fileExists(atPath: dir.path("shelf-20261203-120000.shelfbackup").path))
        for name in others { #expect(FileManager.default.fileExists(atPath: dir.path(name).path), "\(name)") }
        // A folder that is not there has nothing to prune or list.
        #expect(try BackupFolder.prune(dir.path("missing"), keep: 1).isEmpty)
        #expect(try BackupFolder.list(dir.path("missing")).isEmpty)
    }

    @Test func listReadsEachBackupAndNamesTheOnesItCannotRead() async throws {
        let dir = try TemporaryDirectory()
        let library = Library(directory: dir.path("library"))
        try await library.write { batch in for n in 1...3 { try batch.insert(sampleTrack(n)) } }
        let folder = dir.path("backups")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let report = try await library.backup(to: BackupFolder.newFile(in: folder, for: Date()))
        // An older name whose file is no SQLite store, and a file the list does not look at.
        try Data(String(repeating: "not a database, only its name is right\n", count: 200).utf8).write(
            to: folder.appendingPathComponent("shelf-20200101-000000.shelfbackup"))
        try Data("x".utf8).write(to: folder.appendingPathComponent("readme.txt"))

        let listed = try BackupFolder.list(folder)
        #expect(listed.map(\.name) == [URL(fileURLWithPath: report.path).lastPathComponent, "shelf-20200101-000000.shelfbackup"])
        let good = try #require(listed.first)
        #expect(good.path == report.path)
        #expect(good.bytes == report.bytes)
        #expect(good.trackCount == 3)
        #expect(good.schemaVersion == report.schemaVersion)
        #expect(good.includesSecretKey == report.includesSecretKey)
        #expect(abs(good.created.timeIntervalSince(report.created)) < 1.5, "\(good.created) vs \(report.created)")
        #expect(good.error == nil)
        let bad = try #require(listed.last)
        #expect(bad.error != nil)
        #expect(bad.trackCount == nil && bad.schemaVersion == nil && !bad.includesSecretKey)
        #expect(bad.bytes > 0)
    }
}
