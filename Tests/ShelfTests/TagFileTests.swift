import Foundation
import ShelfCore
import ShelfTestSupport
import Testing

@testable import Shelf

@Suite struct TagFileTests {
    @Test func wavTagsSortTagsLyricsAndPictureRoundTrip() throws {
        let dir = try TemporaryDirectory()
        let url = dir.path("song.wav")
        try TestAudio.wav(seconds: 0.5).write(to: url)
        let fields: [String: String?] = [
            "TITLE": "宇多田 Song", "ARTIST": "The Beatles", "ALBUM": "Abbey Road", "ALBUMARTIST": "The Beatles",
            "COMPOSER": "Lennon", "GENRE": "Rock", "DATE": "1969", "TRACKNUMBER": "3/17", "DISCNUMBER": "1/2",
            "TITLESORT": "うただ song", "ARTISTSORT": "Beatles, The", "ALBUMSORT": "Abbey Road", "ALBUMARTISTSORT": "Beatles, The",
            "COMPOSERSORT": "Lennon, John", "LYRICS": "Here comes the sun\nline two", "COMMENT": "remaster",
        ]
        try TagFile.write(url, fields)
        let cover = try TestPictures.jpeg(width: 64, height: 64)
        try TagFile.writePicture(url, cover)
        let tags = try TagFile.read(url)
        for (key, value) in fields { #expect(tags.properties[key] == value, "\(key)") }
        #expect(tags.picture == cover && tags.pictureMimeType == "image/jpeg")
        #expect(abs(tags.durationMilliseconds - 500) <= 1 && tags.sampleRate == 44_100 && tags.channels == 2 && tags.codec == "pcm")
        let track = tags.track(path: url.path)
        #expect(track.title == "宇多田 Song" && track.sortArtist == "Beatles, The" && track.year == 1969)
        #expect(track.trackNumber == 3 && track.trackCount == 17 && track.discNumber == 1 && track.discCount == 2)
        #expect(track.lyrics == "Here comes the sun\nline two" && track.codec == "pcm" && track.duration == 0.5)

        // Removing values and the picture.
        try TagFile.write(url, ["LYRICS": nil, "TITLESORT": nil])
        try TagFile.writePicture(url, nil)
        let cleared = try TagFile.read(url)
        #expect(cleared.properties["LYRICS"] == nil && cleared.properties["TITLESORT"] == nil && cleared.picture == nil)
        #expect(cleared.properties["TITLE"] == "宇多田 Song")
    }

    @Test func badFilesGiveErrorsNamingThePath() throws {
        let dir = try TemporaryDirectory()
        var random = SeededRandom(seed: 9)
        let wav = TestAudio.wav(seconds: 0.2)
        let cases: [(String, Data)] = [
            ("empty.wav", Data()), ("empty.mp3", Data()), ("noise.flac", Data((0..<5_000).map { _ in UInt8(random.int(0...255)) })),
            ("wav-named.flac", wav), ("cut.wav", wav.prefix(30)), ("text.ogg", Data("hello".utf8)),
        ]
        for (name, data) in cases {
            let url = dir.path(name)
            try data.write(to: url)
            do {
                let tags = try TagFile.read(url)
                // A parser may accept noise as a stream with no tags; it must not invent any.
                #expect(tags.properties["TITLE"] == nil, "\(name)")
            } catch {
                #expect(error.description.contains(url.path), "\(name): \(error)")
            }
            #expect(throws: TagError.self, "\(name)") { try TagFile.write(url, ["TITLE": "x"]) }
            #expect(try Data(contentsOf: url) == data, "\(name) was changed")
        }
        #expect(throws: TagError.self) { try TagFile.read(dir.path("missing.wav")) }
        // The format comes from the content when the extension says nothing.
        try wav.write(to: dir.path("unknown.xyz"))
        #expect(try TagFile.read(dir.path("unknown.xyz")).codec == "pcm")
    }
}
