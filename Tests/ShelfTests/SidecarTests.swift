import Foundation
import ShelfCore
import ShelfTestSupport
import Testing

@testable import Shelf

/// The files beside the audio that an import reads: folder and artist pictures, lyrics files,
/// the settings that order them against the file's own, and rescans that notice them change.
@Suite struct SidecarTests {
    /// A still WebP written by ffmpeg (libwebp), so the decoder is graded by another encoder.
    static func webp(width: Int, height: Int) throws -> Data {
        let dir = try TemporaryDirectory()
        let url = dir.path("picture.webp")
        try FFmpegTool.run(["-f", "lavfi", "-i", "testsrc=s=\(width)x\(height)", "-frames:v", "1", "-c:v", "libwebp", "-lossless", "1", url.path])
        return try Data(contentsOf: url)
    }

    static func picture(of track: Track, in library: Library) async throws -> Data? {
        guard let id = track.artworkID else { return nil }
        return try await library.artworkData(id)
    }

    static func track(_ path: URL, in library: Library) async throws -> Track {
        let all = try await library.tracks(ids: (1...50).map { TrackID(Int64($0)) }).tracks
        return try #require(all.first { $0.path == path.path }, "\(path.path) imported")
    }

    @Test func webpDecodesFromItsHeaderAndPixels() throws {
        let data = try Self.webp(width: 40, height: 30)
        #expect(ImageCodec.mimeType(of: data) == "image/webp")
        #expect(try ImageCodec.dimensions(of: data) == (40, 30))
        let image = try ImageCodec.decode(data, maxPixelSize: 100)
        #expect(image.width == 40 && image.height == 30)
        // testsrc is not one flat colour: the decoder produced real pixels.
        #expect(Set(stride(from: 0, to: image.pixels.count, by: 4).map { image.pixels[$0] }).count > 4)
        #expect(throws: ImageError.self) { try ImageCodec.dimensions(of: Data("RIFF\u{0}\u{0}\u{0}\u{0}WEBPVP8 junk".utf8)) }
    }

    /// The picture order setting: embedded first by default, the folder's first with `.files`;
    /// changing it re-reads the tracks it can change and only those. A WebP cover counts.
    @Test func pictureOrderIsASettingAndRescansFollowIt() async throws {
        let dir = try TemporaryDirectory()
        let album = dir.path("music/Album")
        let own = try TestPictures.jpeg(width: 40, height: 40, seed: 4)
        let cover = try Self.webp(width: 32, height: 32)
        let withOwn = try ImportTests.wav(album.appendingPathComponent("1.wav"), frequency: 310, picture: own)
        let without = try ImportTests.wav(album.appendingPathComponent("2.wav"), frequency: 320)
        let elsewhere = try ImportTests.wav(dir.path("music/Other/1.wav"), frequency: 330, picture: own)
        try cover.write(to: album.appendingPathComponent("cover.webp"))
        let library = Library(directory: dir.path("lib"))
        #expect(try await library.importSettings() == .standard)
        let first = try await library.importFiles(at: [dir.path("music")])
        #expect(first.added == 3 && first.settings?.pictures == .embedded)
        #expect(try await Self.picture(of: try await Self.track(withOwn, in: library), in: library) == own)
        #expect(try await Self.picture(of: try await Self.track(without, in: library), in: library) == cover)

        var settings = ImportSettings.standard
        settings.pictures = .files
        try await library.setImportSettings(settings)
        let second = try await library.importFiles(at: [dir.path("music")])
        // The two tracks beside a cover are read again; the one in a folder without is not.
        #expect(second.updated == 2 && second.unchanged == 1 && second.settings?.pictures == .files, "\(second)")
        #expect(try await Self.picture(of: try await Self.track(withOwn, in: library), in: library) == cover)
        #expect(try await Self.picture(of: try await Self.track(elsewhere, in: library), in: library) == own)
        let third = try await library.importFiles(at: [dir.path("music")])
        #expect(third.unchanged == 3 && third.commits == 0)
    }

    /// A cover replaced or removed beside unchanged audio changes the album's artwork ID on the
    /// next scan; the old picture, now unused, is collected.
    @Test func aReplacedOrRemovedCoverIsPickedUpBesideUnchangedAudio() async throws {
        let dir = try TemporaryDirectory()
        let album = dir.path("music/ガール".decomposedStringWithCanonicalMapping)
        let a = try ImportTests.wav(album.appendingPathComponent("1.wav"), frequency: 310, tags: ["ALBUM": "Girl", "ARTIST": "X"])
        _ = try ImportTests.wav(album.appendingPathComponent("2.wav"), frequency: 320, tags: ["ALBUM": "Girl", "ARTIST": "X"])
        let old = try TestPictures.jpeg(width: 64, height: 64, seed: 1)
        try old.write(to: album.appendingPathComponent("cover.jpg"))
        let library = Library(directory: dir.path("lib"))
        _ = try await library.importFiles(at: [dir.path("music")])
        let before = try #require(try await Self.track(a, in: library).artworkID)
        try await library.waitForMirror()
        let albumID = try #require(try await library.groups(GroupQuery(kind: .album)).items.first?.id)
        #expect(try await library.group(albumID, kind: .album)?.artworkID == before)

        let new = try TestPictures.png(width: 50, height: 50, seed: 2)
        try FileManager.default.removeItem(at: album.appendingPathComponent("cover.jpg"))
        try new.write(to: album.appendingPathComponent("Folder.PNG"))
        let replaced = try await library.importFiles(at: [dir.path("music")])
        #expect(replaced.updated == 2 && replaced.added == 0, "\(replaced)")
        let after = try #require(try await Self.track(a, in: library).artworkID)
        #expect(after != before)
        #expect(try await library.artworkData(after) == new)
        #expect(try await library.artworkData(before) == nil, "the replaced picture, used by nothing, is collected")
        try await library.waitForMirror()
        #expect(try await library.group(albumID, kind: .album)?.artworkID == after)

        try FileManager.default.removeItem(at: album.appendingPathComponent("Folder.PNG"))
        let removed = try await library.importFiles(at: [dir.path("music")])
        #expect(removed.updated == 2)
        #expect(try await Self.track(a, in: library).artworkID == nil)
    }

    /// The lyrics order setting, and a lyrics file replaced beside unchanged audio.
    @Test func lyricsFilesFollowTheirSettingAndTheirChanges() async throws {
        let dir = try TemporaryDirectory()
        let music = dir.path("music")
        let embedded = try ImportTests.wav(music.appendingPathComponent("a.wav"), frequency: 410, tags: ["LYRICS": "embedded words"])
        try Data("[00:01.00]from the file".utf8).write(to: music.appendingPathComponent("a.lrc"))
        let plain = try ImportTests.wav(music.appendingPathComponent("b.wav"), frequency: 420)
        try Data("first version".utf8).write(to: music.appendingPathComponent("b.txt"))
        let library = Library(directory: dir.path("lib"))
        _ = try await library.importFiles(at: [music])
        #expect(try await Self.track(embedded, in: library).lyrics == "embedded words")
        #expect(try await Self.track(plain, in: library).lyrics == "first version")

        // A replaced .txt and an .lrc that now comes before it: both seen without touching the audio.
        try Data("second version, longer".utf8).write(to: music.appendingPathComponent("b.txt"))
        let rescan = try await library.importFiles(at: [music])
        #expect(rescan.updated == 1 && rescan.unchanged == 1, "\(rescan)")
        #expect(try await Self.track(plain, in: library).lyrics == "second version, longer")
        try Data("[00:02.00]synced now".utf8).write(to: music.appendingPathComponent("B.LRC"))
        _ = try await library.importFiles(at: [music])
        #expect(try await Self.track(plain, in: library).lyrics == "[00:02.00]synced now")

        let files = try await library.importFiles(
            at: [music], options: ImportOptions(settings: ImportSettings(nameSeparators: [], genreSeparators: [], pictures: .embedded, lyrics: .files)))
        #expect(files.updated == 2)
        #expect(try await Self.track(embedded, in: library).lyrics == "[00:01.00]from the file")
    }

    /// `artist.*` in the folder above an album's (inside the folders imported) is its album
    /// artist's picture, served as the artist view's artwork before any album's; replaced, it
    /// changes; removed, the album's picture stands in again. A decoder bomb is reported.
    @Test func artistPicturesComeFromTheArtistsFolder() async throws {
        let dir = try TemporaryDirectory()
        let music = dir.path("music")
        let artistFolder = music.appendingPathComponent("Artist A")
        let albumCover = try TestPictures.jpeg(width: 60, height: 60, seed: 1)
        let portrait = try TestPictures.jpeg(width: 48, height: 64, seed: 5)
        _ = try ImportTests.wav(
            artistFolder.appendingPathComponent("Album 1/1.wav"), frequency: 300, tags: ["ALBUM": "One", "ALBUMARTIST": "Artist A", "ARTIST": "Artist A"],
            picture: albumCover)
        _ = try ImportTests.wav(
            artistFolder.appendingPathComponent("Album 2/1.wav"), frequency: 310, tags: ["ALBUM": "Two", "ALBUMARTIST": "Artist A", "ARTIST": "Artist A"])
        try portrait.write(to: artistFolder.appendingPathComponent("Artist.jpg"))
        let bombFolder = music.appendingPathComponent("Artist B")
        _ = try ImportTests.wav(bombFolder.appendingPathComponent("Album/1.wav"), frequency: 320, tags: ["ALBUM": "Bomb", "ARTIST": "Artist B"])
        try TestPictures.pngHeader(width: 100_000, height: 100_000).write(to: bombFolder.appendingPathComponent("artist.png"))
        // The music root's own artist.jpg belongs to nobody: an album directly under it has no artist folder.
        try portrait.write(to: music.appendingPathComponent("artist.jpg"))
        _ = try ImportTests.wav(music.appendingPathComponent("Loose/1.wav"), frequency: 330, tags: ["ALBUM": "Loose", "ARTIST": "Artist C"])

        let library = Library(directory: dir.path("lib"))
        let report = try await library.importFiles(at: [music])
        #expect(report.added == 4)
        #expect(report.warnings.map(\.path) == [bombFolder.appendingPathComponent("artist.png").path], "\(report.warnings)")
        try await library.waitForMirror()
        let a = Library.artistID(named: "Artist A")
        let item = try #require(try await library.group(a, kind: .albumArtist))
        #expect(try await library.artworkData(try #require(item.artworkID)) == portrait)
        let listed = try await library.groups(GroupQuery(kind: .albumArtist))
        #expect(try await library.artworkData(try #require(listed.items.first { $0.id == a }?.artworkID)) == portrait)
        let artistView = try await library.groups(GroupQuery(kind: .artist))
        #expect(try await library.artworkData(try #require(artistView.items.first { $0.name == "Artist A" }?.artworkID)) == portrait)
        #expect(try await library.group(Library.artistID(named: "Artist B"), kind: .albumArtist)?.artworkID == nil)
        #expect(try await library.group(Library.artistID(named: "Artist C"), kind: .albumArtist)?.artworkID == nil)
        #expect(try await library.artistPictures([Library.artistID(named: "Artist C")], kind: .albumArtist).isEmpty)

        let again = try await library.importFiles(at: [music])
        #expect(again.unchanged == 4 && again.commits == 0, "an unchanged artist picture is not read or written again: \(again)")

        let replacement = try TestPictures.png(width: 30, height: 30, seed: 6)
        try FileManager.default.removeItem(at: artistFolder.appendingPathComponent("Artist.jpg"))
        try replacement.write(to: artistFolder.appendingPathComponent("artist.png"))
        _ = try await library.importFiles(at: [music])
        let replaced = try #require(try await library.group(a, kind: .albumArtist)?.artworkID)
        #expect(try await library.artworkData(replaced) == replacement)

        try FileManager.default.removeItem(at: artistFolder.appendingPathComponent("artist.png"))
        _ = try await library.importFiles(at: [music])
        let fallback = try #require(try await library.group(a, kind: .albumArtist)?.artworkID)
        #expect(try await library.artworkData(fallback) == albumCover)
        #expect(try await library.artworkData(replaced) == nil)
    }

    /// Two folders with an `artist.*` for one album artist, met by different chunks: the first
    /// stored stays while its file is unchanged, so rescans neither flip between them nor write.
    @Test func anArtistPictureDoesNotFlipBetweenFolders() async throws {
        let dir = try TemporaryDirectory()
        let music = dir.path("music")
        let own = try TestPictures.jpeg(width: 30, height: 30, seed: 7)
        let other = try TestPictures.jpeg(width: 31, height: 31, seed: 8)
        _ = try ImportTests.wav(music.appendingPathComponent("B/Album/1.wav"), frequency: 300, tags: ["ALBUM": "One", "ALBUMARTIST": "B"])
        _ = try ImportTests.wav(music.appendingPathComponent("A/Split/1.wav"), frequency: 310, tags: ["ALBUM": "Split", "ALBUMARTIST": "B"])
        try own.write(to: music.appendingPathComponent("B/artist.jpg"))
        try other.write(to: music.appendingPathComponent("A/artist.jpg"))
        let library = Library(directory: dir.path("lib"))
        _ = try await library.importFiles(at: [music], options: ImportOptions(chunkSize: 1))
        let b = Library.artistID(named: "B")
        let first = try #require(try await library.artistPictures([b], kind: .albumArtist)[b])
        for _ in 0..<2 {
            let again = try await library.importFiles(at: [music], options: ImportOptions(chunkSize: 1))
            #expect(again.commits == 0, "\(again)")
            #expect(try await library.artistPictures([b], kind: .albumArtist)[b] == first)
        }
        // Its file gone, the picture goes at the end of the next import (another folder's may follow).
        let stored = try #require(try await library.artworkData(first))
        let path = music.appendingPathComponent(stored == own ? "B/artist.jpg" : "A/artist.jpg")
        try FileManager.default.removeItem(at: path)
        _ = try await library.importFiles(at: [music], options: ImportOptions(chunkSize: 1))
        #expect(try await library.artistPictures([b], kind: .albumArtist)[b] != first)
    }
}
