import Foundation
import ShelfTestSupport
import Testing

/// A legacy store from `shelf-bench legacy-store` holds real pictures: once `shelf migrate` has
/// moved them out, `shelf artwork` decodes them like any other library's.
@Suite struct MigratedArtworkTests {
    let products = ChildProcess.productsDirectory()

    func shelf(_ arguments: [String]) throws -> ProcessResult {
        try ChildProcess.run(products.appendingPathComponent("shelf"), arguments)
    }

    func json(_ result: ProcessResult) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result.stdout) \(result.stderr)")
    }

    /// Width and height from a PNG's signature and IHDR chunk, or nil when it is not a PNG.
    func pngSize(_ data: Data) -> (Int, Int)? {
        let bytes = [UInt8](data)
        guard bytes.count > 24, bytes.prefix(8) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], Array(bytes[12..<16]) == Array("IHDR".utf8)
        else { return nil }
        func word(_ at: Int) -> Int { bytes[at..<(at + 4)].reduce(0) { $0 << 8 | Int($1) } }
        return (word(16), word(20))
    }

    @Test func migratedLegacyPicturesDecodeToThumbnails() async throws {
        try await offCooperativePool {
            let dir = try TemporaryDirectory()
            let lib = ["--library", dir.path("lib").path]
            let made = try ChildProcess.run(
                products.appendingPathComponent("shelf-bench"),
                ["legacy-store", "--tracks", "24", "--artwork-kib", "12", "--distinct", "6", "--library", dir.path("lib").path])
            try #require(made.status == 0, "\(made.stderr)")
            let migrated = try json(try shelf(lib + ["migrate", "--json"]))
            #expect(migrated["moved"] as? Int == 24)
            #expect(migrated["pictures"] as? Int == 6)

            // Tracks 1 and 7 share picture 0; track 2 has another one.
            var artworkIDs: [Int: String] = [:]
            for id in [1, 2, 7] {
                let out = dir.path("cover-\(id).png")
                let result = try shelf(lib + ["artwork", String(id), "--size", "60", "--out", out.path, "--json"])
                try #require(result.status == 0, "track \(id): \(result.stderr)")
                let written = try json(result)
                #expect(written["width"] as? Int == 60 && written["height"] as? Int == 60 && written["format"] as? String == "png")
                let png = try Data(contentsOf: out)
                let size = try #require(pngSize(png), "track \(id) did not get a PNG")
                #expect(size.0 == 60 && size.1 == 60)
                #expect(png.count == written["bytes"] as? Int)
                artworkIDs[id] = written["artworkID"] as? String
            }
            #expect(artworkIDs[1] != nil && artworkIDs[1] == artworkIDs[7])
            #expect(artworkIDs[1] != artworkIDs[2])
            // The text form, as a person would run it.
            let text = try shelf(lib + ["artwork", "2", "--size", "60", "--out", dir.path("x.png").path])
            #expect(text.status == 0, "\(text.stderr)")
            #expect(pngSize(try Data(contentsOf: dir.path("x.png"))).map { $0 == (60, 60) } == true)
        }
    }
}
