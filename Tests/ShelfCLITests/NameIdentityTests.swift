import Foundation
import ShelfTestSupport
import Testing

/// Names are told apart as a person tells them: ひかる and ヒカル (or びかる) are three artists with
/// three albums, while "Hikaru", "HIKARU", fullwidth "ＨＩＫＡＲＵ" and a name with stray spaces are
/// one; sorting and search still fold them together. Files tagged by mutagen, as Picard tags them.
@Suite struct NameIdentityTests {
    let shelf = ChildProcess.productsDirectory().appendingPathComponent("shelf")

    func json(_ library: String, _ arguments: [String]) throws -> [String: Any] {
        let result = try ChildProcess.run(shelf, ["--library", library] + arguments + ["--json"])
        try #require(result.status == 0, "\(arguments): \(result.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    }

    func names(_ library: String, _ arguments: [String]) throws -> [(name: String, tracks: Int)] {
        let items = try #require(try json(library, arguments)["items"] as? [[String: Any]])
        return items.map { ($0["name"] as? String ?? "?", $0["trackCount"] as? Int ?? -1) }
    }

    @Test(.enabled(if: TagRoundTripTests.hasMutagen, "no .venv with mutagen (make test makes it)"))
    func kanaAndVoicingMarksAreDifferentNamesAndCaseWidthAndSpacesAreNot() async throws {
        try await offCooperativePool {
            let dir = try TemporaryDirectory()
            let music = dir.path("music")
            try FileManager.default.createDirectory(at: music, withIntermediateDirectories: true)
            let tagged: [(artist: String, album: String, ext: String)] = [
                ("ひかる", "alb-ひかる", "flac"), ("ヒカル", "alb-ヒカル", "flac"), ("Hikaru", "alb-Hikaru", "flac"), ("HIKARU", "alb-HIKARU", "mp3"),
                ("ＨＩＫＡＲＵ", "alb-hikaru", "flac"), ("びかる", "alb-びかる", "mp3"), (" ひかる ", "alb-ひかる ", "flac"),
            ]
            for (index, file) in tagged.enumerated() {
                let url = music.appendingPathComponent("\(index).\(file.ext)")
                // Each file its own audio, so none is taken for another's copy.
                let audio = file.ext == "mp3" ? TestAudio.mp3(seconds: 1, seed: UInt64(index)) : TestAudio.flac(seconds: 1, frequency: 300 + 50 * Double(index))
                try audio.write(to: url)
                let result = try ChildProcess.run(
                    TagRoundTripTests.python, [TagRoundTripTests.script.path, "tag-names", url.path, file.artist, file.album, "Song \(index)"])
                try #require(result.status == 0, "\(result.stderr)")
            }
            let library = dir.path("library").path
            let imported = try ChildProcess.run(shelf, ["--library", library, "import", music.path])
            try #require(imported.status == 0, "\(imported.stderr)")

            let artists = try names(library, ["artists"])
            #expect(artists.count == 4, "\(artists)")
            let byName = Dictionary(artists.map { ($0.name.trimmingCharacters(in: .whitespaces), $0.tracks) }, uniquingKeysWith: +)
            #expect(byName["ひかる"] == 2, "\(artists)")
            #expect(byName["ヒカル"] == 1, "\(artists)")
            #expect(byName["びかる"] == 1, "\(artists)")
            #expect(["Hikaru", "HIKARU", "ＨＩＫＡＲＵ"].compactMap { byName[$0] } == [3], "\(artists)")
            // Sorting still folds kana and voicing marks: the three kana names sit together.
            let kana = artists.indices.filter { ["ひかる", "ヒカル", "びかる"].contains(artists[$0].name.trimmingCharacters(in: .whitespaces)) }
            #expect(kana.count == 3 && kana.last! - kana.first! == 2, "\(artists)")

            let albums = try names(library, ["albums"])
            #expect(albums.count == 4, "\(albums)")
            let albumTracks = albums.map(\.tracks).sorted()
            #expect(albumTracks == [1, 1, 2, 3], "\(albums)")
            #expect(albums.contains { $0.name == "alb-ヒカル" && $0.tracks == 1 }, "\(albums)")

            // Search folds as before: an equality filter on ヒカル finds every name it sorts as.
            let found = try #require(try json(library, ["tracks", "--filter", "artist:=ヒカル", "--limit", "20"])["items"] as? [[String: Any]])
            #expect(found.count == 4, "\(found.map { $0["artist"] ?? "" })")
            let substring = try #require(try json(library, ["tracks", "--filter", "album:ひかる", "--limit", "20"])["items"] as? [[String: Any]])
            #expect(substring.count == 4)
        }
    }

    /// A MusicBrainz release ID decides which album a track is on: two releases named "Greatest
    /// Hits" by one artist are two albums, each listed with its own tracks, next to each other,
    /// and a file retagged to the other release moves with the next import. Tagged by mutagen as
    /// Picard tags them (`MUSICBRAINZ_ALBUMID`, ID3's `TXXX:MusicBrainz Album Id`).
    @Test(.enabled(if: TagRoundTripTests.hasMutagen, "no .venv with mutagen (make test makes it)"))
    func releaseIDsTellAlbumsOfOneNameApart() async throws {
        try await offCooperativePool {
            let dir = try TemporaryDirectory()
            let music = dir.path("music")
            try FileManager.default.createDirectory(at: music, withIntermediateDirectories: true)
            let first = "0b6c5e2a-8f4e-4a55-9a56-6a0f7d4b1c01"
            let second = "7f0d3c9e-2b1a-4e8f-b5d6-3c2a1f0e9d02"
            let releases: [(release: String?, ext: String)] = [
                (first, "flac"), (first, "mp3"), (first, "flac"), (second, "flac"), (second, "mp3"), (nil, "flac"),
            ]
            func tag(_ index: Int, _ release: String?, _ ext: String) throws {
                let url = music.appendingPathComponent("\(index).\(ext)")
                let name = ext == "mp3" ? "MusicBrainz Album Id" : "MUSICBRAINZ_ALBUMID"
                let result = try ChildProcess.run(
                    TagRoundTripTests.python,
                    [TagRoundTripTests.script.path, "tag-names", url.path, "Kay", "Greatest Hits", "Song \(index)"] + (release.map { ["\(name)=\($0)"] } ?? []))
                try #require(result.status == 0, "\(result.stderr)")
            }
            for (index, file) in releases.enumerated() {
                let audio = file.ext == "mp3" ? TestAudio.mp3(seconds: 1, seed: UInt64(index)) : TestAudio.flac(seconds: 1, frequency: 300 + 50 * Double(index))
                try audio.write(to: music.appendingPathComponent("\(index).\(file.ext)"))
                try tag(index, file.release, file.ext)
            }
            let library = dir.path("library").path
            func importMusic() throws {
                let imported = try ChildProcess.run(shelf, ["--library", library, "import", music.path])
                try #require(imported.status == 0, "\(imported.stderr)")
            }
            try importMusic()

            var albums = try names(library, ["albums"])
            #expect(albums.map(\.name) == ["Greatest Hits", "Greatest Hits", "Greatest Hits"], "\(albums)")
            #expect(albums.map(\.tracks).sorted() == [1, 2, 3], "\(albums)")
            let kay = try #require(try json(library, ["artists"])["items"] as? [[String: Any]])
            #expect(kay.count == 1 && kay.first?["albumCount"] as? Int == 3, "\(kay)")
            // The name alone still finds every release's tracks, and sorted by album each release's stay together.
            let found = try #require(
                try json(library, ["tracks", "--filter", "album:=\"greatest hits\"", "--sort", "album", "--limit", "20"])["items"] as? [[String: Any]])
            #expect(found.count == 6)
            let order = found.map { (($0["musicBrainz"] as? [String: Any])?["releaseID"] as? String) ?? "" }
            #expect(order.indices.dropFirst().filter { order[$0] != order[$0 - 1] }.count == 2, "\(order)")

            // The mp3 of the second release retagged to the first: the next import moves it.
            try tag(4, first, "mp3")
            try importMusic()
            albums = try names(library, ["albums"])
            #expect(albums.map(\.tracks).sorted() == [1, 1, 4], "\(albums)")
        }
    }

    /// A MusicBrainz artist ID decides which artist a track is by: "John Williams" the composer
    /// and the guitarist are two artists (and their albums of one name two albums), listed next
    /// to each other, and a file without an ID is by the name alone. A file retagged to the other
    /// ID moves with the next import. Tagged by mutagen as Picard tags them
    /// (`MUSICBRAINZ_ARTISTID`, ID3's `TXXX:MusicBrainz Artist Id`).
    @Test(.enabled(if: TagRoundTripTests.hasMutagen, "no .venv with mutagen (make test makes it)"))
    func artistIDsTellArtistsOfOneNameApart() async throws {
        try await offCooperativePool {
            let dir = try TemporaryDirectory()
            let music = dir.path("music")
            try FileManager.default.createDirectory(at: music, withIntermediateDirectories: true)
            let composer = "53b106e7-0cc6-42cc-ac95-ed8d30a3a98e"
            let guitarist = "2f0c9a6e-4a8b-4d55-8f3e-1b7c5d9e0a11"
            let files: [(id: String?, album: String, ext: String)] = [
                (composer, "Star Wars", "flac"), (composer, "Star Wars", "mp3"), (composer, "Greatest Hits", "flac"),
                (guitarist, "Greatest Hits", "flac"), (guitarist, "Greatest Hits", "mp3"), (nil, "Greatest Hits", "flac"),
            ]
            func tag(_ index: Int, _ id: String?, _ album: String, _ ext: String) throws {
                let url = music.appendingPathComponent("\(index).\(ext)")
                let name = ext == "mp3" ? "MusicBrainz Artist Id" : "MUSICBRAINZ_ARTISTID"
                let result = try ChildProcess.run(
                    TagRoundTripTests.python,
                    [TagRoundTripTests.script.path, "tag-names", url.path, "John Williams", album, "Song \(index)"] + (id.map { ["\(name)=\($0)"] } ?? []))
                try #require(result.status == 0, "\(result.stderr)")
            }
            for (index, file) in files.enumerated() {
                let audio = file.ext == "mp3" ? TestAudio.mp3(seconds: 1, seed: UInt64(index)) : TestAudio.flac(seconds: 1, frequency: 300 + 50 * Double(index))
                try audio.write(to: music.appendingPathComponent("\(index).\(file.ext)"))
                try tag(index, file.id, file.album, file.ext)
            }
            let library = dir.path("library").path
            func importMusic() throws {
                let imported = try ChildProcess.run(shelf, ["--library", library, "import", music.path])
                try #require(imported.status == 0, "\(imported.stderr)")
            }
            try importMusic()

            var artists = try names(library, ["artists"])
            #expect(artists.map(\.name) == ["John Williams", "John Williams", "John Williams"], "\(artists)")
            #expect(artists.map(\.tracks).sorted() == [1, 2, 3], "\(artists)")
            let owners = try names(library, ["artists", "--by", "albumArtist"])
            #expect(owners.map(\.tracks).sorted() == [1, 2, 3], "each is its own albums' artist: \(owners)")
            let albums = try names(library, ["albums"])
            #expect(albums.filter { $0.name == "Greatest Hits" }.map(\.tracks).sorted() == [1, 1, 2], "\(albums)")
            // The name alone still finds every artist's tracks, and sorted by artist each artist's stay together.
            let found = try #require(
                try json(library, ["tracks", "--filter", "artist:=\"john williams\"", "--sort", "artist", "--limit", "20"])["items"] as? [[String: Any]])
            #expect(found.count == 6)
            let order = found.map { (($0["musicBrainz"] as? [String: Any])?["artistIDs"] as? [String])?.first ?? "" }
            #expect(order.indices.dropFirst().filter { order[$0] != order[$0 - 1] }.count == 2, "\(order)")

            // The guitarist's mp3 retagged to the composer: the next import moves it.
            try tag(4, composer, "Greatest Hits", "mp3")
            try importMusic()
            artists = try names(library, ["artists"])
            #expect(artists.map(\.tracks).sorted() == [1, 1, 4], "\(artists)")
        }
    }
}
