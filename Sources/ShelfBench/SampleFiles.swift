import Foundation
import Shelf
import ShelfCore
import ShelfTestSupport

/// `shelf-bench sample-files`: real audio files from the deterministic catalogue, in WAV, AIFF,
/// MP3, FLAC and Ogg Opus (one format per album), tagged through TagLib (every text field, sort
/// tags, lyrics, compilations, track and disc totals) with a cover per album (JPEG or PNG).
/// `--tagged` writes a library as Picard leaves one: the catalogue's details as tags (several
/// artists and genres, MusicBrainz IDs, ReplayGain, labels, release types, dates, BPM, ISRCs,
/// moods), every other album's picture as `cover.jpg` beside its files instead of embedded, the
/// lyrics of every other track with lyrics as `NAME.lrc`, and an `.m3u8` playlist at the top.
/// Everything is written here: no encoder, no network.
struct SampleFiles {
    let tracks: Int
    let directory: URL
    let seconds: Double
    let tagged: Bool

    init(_ words: [String]) throws {
        let flags = try Flags(words, known: ["--tracks", "--dir", "--seconds"], switches: ["--tagged"])
        tracks = try flags.int("--tracks")
        guard let path = flags.string("--dir") else { throw BenchUsageError(message: "--dir is required") }
        directory = URL(fileURLWithPath: path)
        seconds = Double(flags.string("--seconds") ?? "0.3") ?? 0.3
        tagged = flags.bool("--tagged")
    }

    static let formats = ["flac", "mp3", "opus", "wav", "aiff"]

    func run(_ results: inout Report) throws {
        let started = Date()
        let written = try Self.write(tracks: tracks, to: directory, seconds: seconds, tagged: tagged)
        let elapsed = Date().timeIntervalSince(started)
        results.sentence(
            """
            wrote \(figure: "files", written) files of \(figure: "audioSeconds", seconds, decimals: 2) s under \(directory.path) \
            in \(figure: "seconds", elapsed, decimals: 1) s (\(figure: "filesPerSecond", Double(written) / max(elapsed, 1e-9)) files/s)
            """)
    }

    /// Writes the files; returns how many. `formats` are taken in turn by album; without
    /// `pictures` no cover is written (what a rescan of half a million files needs on disk);
    /// `firstIndex` moves the audio along, so that files added to a set are not its duplicates.
    static func write(
        tracks: Int, to directory: URL, seconds: Double, tagged: Bool = false, formats: [String] = formats, pictures: Bool = true,
        seed: UInt64 = 23, firstIndex: Int = 0
    ) throws -> Int {
        let catalogue = DatasetGenerator(tracks: tracks, seed: seed, tagged: tagged).allTracks()
        var albumIndex: [String: Int] = [:]
        var covers: [Int: (Data, String)] = [:]
        var playlist = "#EXTM3U\n"
        for (index, track) in catalogue.enumerated() {
            let albumKey = "\(track.albumArtist ?? "")\u{1}\(track.album ?? "")"
            let album = albumIndex[albumKey] ?? albumIndex.count
            albumIndex[albumKey] = album
            let format = formats[album % formats.count]
            let folder = directory.appendingPathComponent(component(track.albumArtist ?? track.artist ?? "Unknown Artist"))
                .appendingPathComponent(component(track.album ?? "Unknown Album"))
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let name = String(format: "%d-%02d ", track.discNumber ?? 1, track.trackNumber ?? 0) + component(track.title ?? "Untitled")
            let url = folder.appendingPathComponent(String(name.prefix(120)) + "." + format)
            let frequency = 180 + Double(firstIndex + index) * 0.37  // distinct PCM for every track
            let audio: Data =
                switch format {
                case "flac": TestAudio.flac(seconds: seconds, frequency: frequency)
                case "mp3": TestAudio.mp3(seconds: seconds, seed: UInt64(firstIndex + index))
                case "opus": TestAudio.opus(seconds: seconds, seed: UInt64(firstIndex + index))
                case "aiff": TestAudio.aiff(seconds: seconds, frequency: frequency)
                default: TestAudio.wav(seconds: seconds, frequency: frequency)
                }
            try audio.write(to: url)
            var tags = fields(track)
            if tagged {
                tags.merge(detailFields(track.details)) { _, detail in detail }
                // Every other track with lyrics keeps them in a lyrics file beside it, synced.
                if let lyrics = track.lyrics, index % 2 == 0 {
                    tags["LYRICS"] = nil
                    let lines = lyrics.split(separator: "\n").enumerated().map { String(format: "[00:%02d.00]", 2 * $0.offset + 1) + $0.element }
                    try ("[la:en]\n" + lines.joined(separator: "\n") + "\n").write(
                        to: url.deletingPathExtension().appendingPathExtension("lrc"), atomically: false, encoding: .utf8)
                }
                if index % 50 == 0 {
                    let relative = url.path.dropFirst(directory.path.count + 1)
                    playlist += "#EXTINF:\(Int(seconds.rounded(.up))),\(track.artist ?? "") - \(track.title ?? "")\n\(relative)\n"
                }
            }
            try TagFile.write(url, tags)
            guard pictures else { continue }
            if covers[album] == nil {
                let png = album % 3 == 0
                let bytes = try DatasetGenerator.picture(side: 300, index: album, noise: false)
                covers[album] =
                    png
                    ? (try ImageCodec.encode(try ImageCodec.decode(bytes, maxPixelSize: 300), as: .png), "image/png") : (bytes, "image/jpeg")
            }
            let (cover, mime) = covers[album]!
            if tagged, album % 2 == 0 {
                // The folder's picture, not the files': as a library scanned from CDs often is.
                let file = folder.appendingPathComponent(mime == "image/png" ? "cover.png" : "cover.jpg")
                if !FileManager.default.fileExists(atPath: file.path) { try cover.write(to: file) }
            } else {
                try TagFile.writePicture(url, cover, mimeType: mime)
            }
        }
        if tagged { try playlist.write(to: directory.appendingPathComponent("Every fiftieth.m3u8"), atomically: false, encoding: .utf8) }
        return catalogue.count
    }

    /// The details as Picard writes them, in TagLib's property names (lists as one value per item).
    static func detailFields(_ d: TrackDetails) -> [String: String?] {
        func list(_ values: [String]) -> String? { values.isEmpty ? nil : values.joined(separator: "\u{1F}") }
        func gain(_ value: Double?) -> String? { value.map { String(format: "%.2f dB", $0) } }
        func peak(_ value: Double?) -> String? { value.map { String(format: "%.6f", $0) } }
        let mb = d.musicBrainz
        return [
            "ARTISTS": list(d.artists), "GENRE": list(d.genres), "MOOD": list(d.moods), "LABEL": list(d.labels),
            "RELEASETYPE": list(d.releaseTypes), "ISRC": list(d.isrcs), "ORIGINALDATE": d.originalDate, "BPM": d.bpm.map(String.init),
            "MUSICBRAINZ_TRACKID": mb.recordingID, "MUSICBRAINZ_RELEASETRACKID": mb.releaseTrackID, "MUSICBRAINZ_ALBUMID": mb.releaseID,
            "MUSICBRAINZ_RELEASEGROUPID": mb.releaseGroupID, "MUSICBRAINZ_ARTISTID": list(mb.artistIDs),
            "MUSICBRAINZ_ALBUMARTISTID": list(mb.albumArtistIDs),
            "REPLAYGAIN_TRACK_GAIN": gain(d.replayGain?.trackGain), "REPLAYGAIN_TRACK_PEAK": peak(d.replayGain?.trackPeak),
            "REPLAYGAIN_ALBUM_GAIN": gain(d.replayGain?.albumGain), "REPLAYGAIN_ALBUM_PEAK": peak(d.replayGain?.albumPeak),
        ].filter { $0.value != nil }
    }

    static func fields(_ t: Track) -> [String: String?] {
        func pair(_ number: Int?, _ total: Int?) -> String? {
            guard let number else { return nil }
            return total.map { "\(number)/\($0)" } ?? "\(number)"
        }
        return [
            "TITLE": t.title, "ARTIST": t.artist, "ALBUM": t.album, "ALBUMARTIST": t.albumArtist, "COMPOSER": t.composer,
            "GENRE": t.genre, "DATE": t.year.map(String.init), "TRACKNUMBER": pair(t.trackNumber, t.trackCount),
            "DISCNUMBER": pair(t.discNumber, t.discCount), "COMPILATION": t.compilation ? "1" : nil, "LYRICS": t.lyrics,
            "COMMENT": t.comment, "TITLESORT": t.sortTitle, "ARTISTSORT": t.sortArtist, "ALBUMSORT": t.sortAlbum,
            "ALBUMARTISTSORT": t.sortAlbumArtist, "COMPOSERSORT": t.sortComposer,
        ].filter { $0.value.map { !SortKey.isBlank($0) } ?? false }
    }

    /// A file-name component: no separators, no control characters, not hidden, not empty.
    static func component(_ text: String) -> String {
        var cleaned = String(text.unicodeScalars.map { $0 == "/" || $0.value < 0x20 ? "_" : Character($0) })
            .trimmingCharacters(in: .whitespacesAndNewlines)
        while cleaned.hasPrefix(".") { cleaned.removeFirst() }
        return cleaned.isEmpty ? "_" : String(cleaned.prefix(100))
    }
}
