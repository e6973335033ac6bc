import Foundation
import Testing

@testable import ShelfCore

/// `FileContents.read`, which replaced `FileManager.contents(atPath:)` for outside files after the
/// m3u fuzz target found that an empty file leaked 4 KiB there: every size reads back exactly, an
/// empty file is empty data, and a FIFO, a folder or a missing path is nil without blocking.
@Suite struct FileContentsTests {
    @Test func emptyFilesFIFOsAndFoldersAreReadWithoutLeakOrWait() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("shelf-contents-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        for size in [0, 1, 65_535, 65_536, 200_001] {
            let bytes = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            let file = folder.appendingPathComponent("\(size).bin")
            try bytes.write(to: file)
            #expect(FileContents.read(file.path) == bytes, "\(size) bytes")
        }
        let fifo = folder.appendingPathComponent("pipe.m3u").path
        #expect(mkfifo(fifo, 0o644) == 0)
        #expect(FileContents.read(fifo) == nil, "a FIFO is no file to read (FileManager blocked on it)")
        #expect(FileContents.read(folder.path) == nil)
        #expect(FileContents.read(folder.appendingPathComponent("missing").path) == nil)
    }
}
