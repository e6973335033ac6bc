import Foundation
import Shelf
import ShelfCore

/// Builds a realistic, deterministic music catalogue for benchmarks, tests and the demo.
///
/// The same `(tracks, seed)` always gives the same tracks. Artists (about one per 12 tracks) are
/// drawn with a Zipf law, so a few own many albums and most own one; albums have 8–16 tracks, some
/// two discs; about 8% are compilations of various artists. Names mix English (many with a leading
/// "The"), accented Latin, Japanese kanji and kana (half the kanji names with kana sort tags),
/// Korean, Cyrillic, and digits and symbols. About a fifth of the tracks carry sort tags, some of
/// them blank or whitespace-only (ASCII and U+3000), as real taggers leave them.
public struct DatasetGenerator: Sendable {
    /// How many tracks to make.
    public let trackCount: Int
    /// The seed fixing every choice.
    public let seed: UInt64

    /// Pictures to give the tracks: square JPEGs of `side` pixels, one per album (shared by its
    /// tracks) or one per track; noise (which JPEG cannot compress: about 300 KB at 600 px) or a
    /// smooth gradient (a few KB, like flat cover art).
    public struct Artwork: Sendable {
        public var side: Int
        public var perTrack: Bool
        public var noise: Bool

        /// Pictures of `side` pixels, per album unless `perTrack`, noise unless `noise` is false.
        public init(side: Int, perTrack: Bool = false, noise: Bool = true) {
            self.side = side
            self.perTrack = perTrack
            self.noise = noise
        }
    }

    /// Pictures to add, none unless set.
    public var artwork: Artwork?
    /// Details as Picard and beets leave them (`TrackDetails`): a fifth of the tracks with 2–4
    /// artists (credited "A feat. B & C"), a third with two genres, MusicBrainz IDs on a tenth,
    /// ReplayGain on four in five, labels, release types, original dates, BPM, ISRCs and moods on
    /// some. Drawn from a random stream of their own, so every other field is the same either way.
    public var tagged: Bool

    /// Percentages that split the album artists' folders between libraries: with `[50, 30, 20]`
    /// each album artist's folder is under `/music/L1/`, `/music/L2/` or `/music/L3/` by a hash of
    /// its name (about those shares of the artists); empty, the default, keeps them all under
    /// `/music/`. Only the paths change.
    public var libraryShares: [Int] = []

    /// The folder under `/music/` that `libraryShares` puts an album artist's folder in ("" without shares).
    func libraryFolder(_ albumArtist: String) -> String {
        guard !libraryShares.isEmpty else { return "" }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in albumArtist.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        let point = Int(hash % 100)
        var total = 0
        for (index, share) in libraryShares.enumerated() {
            total += share
            if point < total { return "L\(index + 1)/" }
        }
        return "L\(libraryShares.count)/"
    }

    /// A generator for `tracks` tracks from `seed`.
    public init(tracks: Int, seed: UInt64 = 1, artwork: Artwork? = nil, tagged: Bool = false) {
        self.trackCount = tracks
        self.seed = seed
        self.artwork = artwork
        self.tagged = tagged
    }

    /// A deterministic square JPEG for picture number `index`.
    public static func picture(side: Int, index: Int, noise: Bool) throws -> Data {
        var random = SeededRandom(seed: UInt64(index) &* 0x9E37_79B9 &+ 17)
        var pixels = [UInt8](repeating: 255, count: side * side * 4)
        if noise {
            var offset = 0
            while offset < pixels.count {
                var word = random.next()
                for _ in 0..<8 where offset < pixels.count {
                    if offset % 4 != 3 { pixels[offset] = UInt8(truncatingIfNeeded: word) }
                    word >>= 8
                    offset += 1
                }
            }
        } else {
            let tint = UInt8(truncatingIfNeeded: random.next())
            for y in 0..<side {
                for x in 0..<side {
                    let offset = (y * side + x) * 4
                    pixels[offset] = UInt8(x * 255 / max(1, side - 1))
                    pixels[offset + 1] = UInt8(y * 255 / max(1, side - 1))
                    pixels[offset + 2] = tint
                }
            }
        }
        return try ImageCodec.encode(DecodedImage(width: side, height: side, bytesPerRow: side * 4, pixels: pixels), as: .jpeg(quality: 90))
    }

    /// What `fill` did.
    public struct Report: Sendable {
        public var tracks: Int
        public var albums: Int
        public var artists: Int
        public var seconds: Double
        /// Of `seconds`, the time spent making tracks rather than writing them.
        public var generatorSeconds: Double
    }

    struct Artist {
        var name: String
        var sortName: String?
        var script: Script
    }

    enum Script: CaseIterable { case english, accented, kanji, kana, korean, cyrillic, symbolic }

    /// The reference date all generated dates are relative to, so output never depends on "now".
    static let epoch = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01T00:00:00Z

    /// A stream of the catalogue's tracks, album by album; memory stays bounded by one chunk.
    public func makeStream() -> Stream { Stream(generator: self) }

    /// Hands out the catalogue in chunks; `next(upTo:)` returns nil when every track was made.
    public struct Stream {
        let generator: DatasetGenerator
        var random: SeededRandom
        let artists: [Artist]
        let zipf: ZipfSampler
        var album: AlbumContext?
        /// Tracks made so far.
        public private(set) var made = 0
        /// Albums started so far.
        public private(set) var albums = 0
        var usedArtists = Set<Int>()
        var previousHash: String?

        /// Distinct artists credited so far.
        public var artistsUsed: Int { usedArtists.count }

        init(generator: DatasetGenerator) {
            self.generator = generator
            random = SeededRandom(seed: generator.seed)
            artists = generator.makeArtists(count: max(1, generator.trackCount / 12), random: &random)
            zipf = ZipfSampler(count: artists.count, exponent: 0.75)
        }

        /// Up to `limit` more tracks, or nil at the end.
        public mutating func next(upTo limit: Int) -> [Track]? {
            guard made < generator.trackCount else { return nil }
            var chunk: [Track] = []
            chunk.reserveCapacity(limit)
            while chunk.count < limit, made < generator.trackCount {
                if album == nil || album!.next >= album!.size { startAlbum() }
                chunk.append(makeTrack())
                made += 1
            }
            return chunk
        }

        /// 16 lowercase hex digits.
        static func hex(_ value: UInt64) -> String {
            let digits = String(value, radix: 16)
            return String(repeating: "0", count: 16 - digits.count) + digits
        }

        private mutating func startAlbum() {
            albums += 1
            let isCompilation = random.chance(0.08)
            let artistIndex = zipf.sample(using: &random)
            if !isCompilation { usedArtists.insert(artistIndex) }
            let albumArtist = artists[artistIndex]
            let size = min(random.int(8...16), generator.trackCount - made)
            let discs = size >= 12 && random.chance(0.1) ? 2 : 1
            let (title, sortTitle) = generator.makeTitle(
                for: isCompilation ? .english : albumArtist.script, album: true, random: &random)
            let genre: String? =
                random.chance(0.02) ? nil : random.chance(0.03) ? random.pick(NamePools.blanks) : random.pick(NamePools.genres)
            let added = DatasetGenerator.epoch.addingTimeInterval(-random.double(0..<(10 * 365 * 86_400)))
            let format = random.pick([
                ("FLAC", 900, 44_100, "flac"), ("FLAC", 2_300, 96_000, "flac"), ("MP3", 320, 44_100, "mp3"),
                ("MP3", 192, 44_100, "mp3"), ("AAC", 256, 44_100, "m4a"), ("Opus", 160, 48_000, "opus"),
            ])
            album = AlbumContext(
                number: albums, artist: albumArtist, isCompilation: isCompilation, size: size, discs: discs,
                perDisc: (size + discs - 1) / discs, title: title, sortTitle: sortTitle, year: random.int(1960...2025),
                genre: genre, added: added, codec: format.0, bitrate: format.1, sampleRate: format.2, ext: format.3)
        }

        private mutating func makeTrack() -> Track {
            let a = album!
            album!.next += 1
            let index = a.next
            let disc = index / a.perDisc + 1
            let number = index % a.perDisc + 1
            let trackArtist: Artist
            if a.isCompilation {
                let pickIndex = random.int(0...(artists.count - 1))
                usedArtists.insert(pickIndex)
                trackArtist = artists[pickIndex]
            } else {
                trackArtist = a.artist
            }
            let (title, titleSort) = generator.makeTitle(for: trackArtist.script, album: false, random: &random)
            let duration = (60 + random.double(0..<180) + random.double(0..<180) + random.double(0..<120)).rounded()
            let playCount = random.chance(0.4) ? 0 : Int(pow(random.double(0..<1), 3) * 200)
            var hash = Self.hex(random.next()) + Self.hex(random.next())
            if let previousHash, random.chance(0.005) { hash = previousHash }  // a few duplicates
            previousHash = hash
            let albumArtistName = a.isCompilation ? "Various Artists" : a.artist.name
            var track = Track(
                path:
                    "/music/\(generator.libraryFolder(albumArtistName))\(DatasetGenerator.safe(albumArtistName))/\(a.number) \(DatasetGenerator.safe(a.title))/"
                    + "\(disc)-\(number < 10 ? "0" : "")\(number) \(DatasetGenerator.safe(title)).\(a.ext)",
                fileSize: Int64(duration * Double(a.bitrate) * 125), fileModified: a.added,
                title: title, artist: trackArtist.name, album: a.title, albumArtist: albumArtistName,
                composer: random.chance(0.3) ? random.pick(artists).name : nil,
                genre: a.genre, year: a.year, trackNumber: number, trackCount: a.perDisc,
                discNumber: disc, discCount: a.discs, duration: duration, bitrate: a.bitrate, sampleRate: a.sampleRate,
                channels: 2, codec: a.codec, compilation: a.isCompilation,
                comment: random.chance(0.1) ? "Ripped \(a.year)" : nil,
                lyrics: random.chance(0.05) ? "\(title)\n\(title), \(title)\nla la la" : nil,
                sortTitle: titleSort,
                sortArtist: random.chance(0.03) ? random.pick(NamePools.blanks) : trackArtist.sortName,
                sortAlbum: a.sortTitle,
                sortAlbumArtist: a.isCompilation ? nil : a.artist.sortName,
                dateAdded: a.added.addingTimeInterval(Double(index)),
                playCount: playCount, skipCount: playCount / 10,
                lastPlayed: playCount > 0
                    ? a.added.addingTimeInterval(random.double(0..<DatasetGenerator.epoch.timeIntervalSince(a.added))) : nil,
                rating: random.chance(0.6) ? 0 : 20 * random.int(1...5),
                audioHash: hash)
            if random.chance(0.01) { track.title = random.pick(NamePools.blanks) }
            if generator.tagged { addDetails(to: &track, album: a, artist: trackArtist) }
            return track
        }

        /// The MusicBrainz release ID of one album in ten (by a hash of its number and title), nil
        /// for the others.
        static func releaseID(of album: AlbumContext) -> String? {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in "\(album.number)|\(album.title)".utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            guard hash % 10 == 0 else { return nil }
            let hex = Array(Self.hex(hash) + Self.hex(hash &* 0x9E37_79B9_7F4A_7C15))
            return String(hex[0..<8]) + "-" + String(hex[8..<12]) + "-4" + String(hex[13..<16]) + "-a" + String(hex[17..<20]) + "-" + String(hex[20..<32])
        }

        /// The MusicBrainz artist ID of one artist name in eight (by a hash of the name), nil for
        /// the others: an artist carries its ID on every track or on none.
        static func artistID(of name: String?) -> String? {
            guard let name else { return nil }
            var hash: UInt64 = 0x8422_2325_cbf2_9ce4
            for byte in name.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            guard hash % 8 == 0 else { return nil }
            let hex = Array(Self.hex(hash &* 0x9E37_79B9_7F4A_7C15) + Self.hex(hash))
            return String(hex[0..<8]) + "-" + String(hex[8..<12]) + "-4" + String(hex[13..<16]) + "-b" + String(hex[17..<20]) + "-" + String(hex[20..<32])
        }

        /// The IDs of `names` when every one of them has one (a tagger identifies a credit whole).
        static func artistIDs(of names: [String]) -> [String] {
            let ids = names.compactMap(artistID(of:))
            return ids.count == names.count ? ids : []
        }

        /// The tagged mode's details, from a stream seeded by the track's place alone.
        private func addDetails(to track: inout Track, album a: AlbumContext, artist: Artist) {
            var r = SeededRandom(seed: generator.seed &* 0x9E37_79B9_7F4A_7C15 &+ UInt64(made))
            var details = TrackDetails()
            func uuid() -> String {
                let hex = Self.hex(r.next()) + Self.hex(r.next())
                let c = Array(hex)
                return String(c[0..<8]) + "-" + String(c[8..<12]) + "-" + String(c[12..<16]) + "-" + String(c[16..<20]) + "-" + String(c[20..<32])
            }
            if r.chance(0.2) {
                var names = [artist.name]
                for _ in 0..<r.int(1...3) {
                    let other = artists[r.int(0...(artists.count - 1))].name
                    if !names.contains(other) { names.append(other) }
                }
                details.artists = names
                if names.count > 1 {
                    track.artist = names[0] + " feat. " + names.dropFirst().joined(separator: " & ")
                }
            }
            if let genre = track.genre, !SortKey.isBlank(genre), r.chance(0.33) {
                let second = r.pick(NamePools.genres)
                details.genres = second == genre ? [genre] : [genre, second]
            }
            if r.chance(0.1) {
                details.musicBrainz = MusicBrainzIDs(
                    recordingID: uuid(), releaseTrackID: uuid(), releaseID: uuid(), releaseGroupID: uuid(), artistIDs: [uuid()],
                    albumArtistIDs: [uuid()])
            }
            // Picard tags a whole release: every track of a tenth of the albums carries its album's
            // release ID, and no track of the others does (a release ID is part of an album's identity).
            details.musicBrainz.releaseID = Self.releaseID(of: a)
            // Artist IDs, likewise, belong to artists, not to random tracks (they are part of an
            // artist's identity): the lists' names, else the display name, each with its own.
            details.musicBrainz.artistIDs = Self.artistIDs(of: details.artists.isEmpty ? [track.artist].compactMap { $0 } : details.artists)
            details.musicBrainz.albumArtistIDs = Self.artistIDs(of: [track.albumArtist].compactMap { $0 })
            if r.chance(0.8) {
                let gain = (r.double(-14..<2) * 100).rounded() / 100
                details.replayGain = ReplayGain(
                    trackGain: gain, trackPeak: (r.double(0.5..<1) * 1e6).rounded() / 1e6, albumGain: gain + 0.5, albumPeak: 0.99)
            }
            if r.chance(0.5) { details.labels = [r.pick(["Warp", "4AD", "Sub Pop", "ソニー", "Blue Note", "Ninja Tune", "Rough Trade"])] }
            if r.chance(0.4) { details.releaseTypes = r.chance(0.8) ? ["album"] : [r.pick(["ep", "single", "compilation", "live"])] }
            if r.chance(0.3) { details.originalDate = String(max(1950, a.year - r.int(0...20))) }
            if r.chance(0.4) { details.bpm = r.int(60...180) }
            if r.chance(0.2) { details.isrcs = ["JP" + String(r.int(100...999)) + String(r.int(1_000_000...9_999_999))] }
            if r.chance(0.1) { details.moods = [r.pick(["calm", "happy", "dark", "energetic"])] }
            track.details = details
        }
    }

    struct AlbumContext {
        var number: Int
        var artist: Artist
        var isCompilation: Bool
        var size: Int
        var discs: Int
        var perDisc: Int
        var title: String
        var sortTitle: String?
        var year: Int
        var genre: String?
        var added: Date
        var codec: String
        var bitrate: Int
        var sampleRate: Int
        var ext: String
        var next = 0
    }

    /// Fills `library` through the engine's batch API, one transaction per chunk. The read mirror
    /// is off meanwhile — building it once afterwards, in bulk, is far cheaper than keeping 29
    /// indexes current row by row — and is switched back on at the end (it then builds in the
    /// background).
    public func fill(_ library: Library, chunkSize: Int = 5_000, progress: @Sendable (Int) -> Void = { _ in }) async throws -> Report {
        let start = Date()
        try await library.disableMirror()
        var stream = makeStream()
        var generatorSeconds = 0.0
        var pictureCount = 0
        while true {
            let made = Date()
            guard let chunk = stream.next(upTo: chunkSize) else { break }
            generatorSeconds += Date().timeIntervalSince(made)
            // Pictures are made outside the write: encoding is slow, and the batch holds the lock.
            var pictures: [Data?] = Array(repeating: nil, count: chunk.count)
            if let artwork {
                var made: [String: Data] = [:]
                for (index, track) in chunk.enumerated() {
                    let key = artwork.perTrack ? track.path : "\(track.albumArtist ?? "")\u{1}\(track.album ?? "")"
                    if made[key] == nil { made[key] = try Self.picture(side: artwork.side, index: pictureCount + made.count, noise: artwork.noise) }
                    pictures[index] = made[key]
                }
                pictureCount += made.count
            }
            try await library.write { [pictures] batch in
                for (index, var track) in chunk.enumerated() {
                    if let picture = pictures[index] { track.artworkID = try batch.addArtwork(picture) }
                    try batch.insert(track)
                }
            }
            progress(stream.made)
        }
        try await library.enableMirror(wait: false)
        return Report(
            tracks: stream.made, albums: stream.albums, artists: stream.artistsUsed,
            seconds: Date().timeIntervalSince(start), generatorSeconds: generatorSeconds)
    }

    /// Every track in memory; for tests on small catalogues.
    public func allTracks() -> [Track] {
        var stream = makeStream()
        var tracks: [Track] = []
        while let chunk = stream.next(upTo: 10_000) { tracks += chunk }
        return tracks
    }

    /// A path component: no separators, no surrounding blanks. Most names need no change, and
    /// checking that first keeps Foundation's slow string search out of the hot loop.
    static func safe(_ component: String) -> String {
        let needsWork =
            component.utf8.contains(UInt8(ascii: "/")) || component.isEmpty
            || component.first!.isWhitespace || component.last!.isWhitespace
        if !needsWork { return component }
        let cleaned = component.replacingOccurrences(of: "/", with: "_").trimmingCharacters(in: .whitespacesAndNewlines)
        return cleaned.isEmpty ? "_" : cleaned
    }

    func makeArtists(count: Int, random: inout SeededRandom) -> [Artist] {
        var used = Set<String>()
        var artists: [Artist] = []
        artists.reserveCapacity(count)
        let weights: [(Script, Double)] = [
            (.english, 0.52), (.accented, 0.1), (.kanji, 0.12), (.kana, 0.05), (.korean, 0.07), (.cyrillic, 0.07), (.symbolic, 0.07),
        ]
        while artists.count < count {
            var u = random.double(0..<1)
            var script = Script.english
            for (candidate, weight) in weights {
                if u < weight {
                    script = candidate
                    break
                }
                u -= weight
            }
            var artist = makeArtist(script, random: &random)
            if !used.insert(artist.name).inserted {
                let suffix = " \(artists.count)"
                artist.name += suffix
                if let sort = artist.sortName, !SortKey.isBlank(sort) { artist.sortName = sort + suffix }
                used.insert(artist.name)
            }
            artists.append(artist)
        }
        return artists
    }

    private func makeArtist(_ script: Script, random: inout SeededRandom) -> Artist {
        switch script {
        case .english:
            let core = "\(random.pick(NamePools.adjectives)) \(random.pick(NamePools.nouns))"
            if random.chance(0.35) {
                let name = "The \(core)s"
                return Artist(name: name, sortName: random.chance(0.6) ? "\(core)s, The" : nil, script: script)
            }
            if random.chance(0.1) { return Artist(name: "A \(core)", sortName: nil, script: script) }
            return Artist(name: core, sortName: nil, script: script)
        case .accented:
            let base = random.pick(NamePools.accented)
            return Artist(name: random.chance(0.5) ? base : "\(base) \(random.pick(NamePools.nouns))", sortName: nil, script: script)
        case .kanji:
            let family = random.pick(NamePools.japaneseFamily)
            let given = random.pick(NamePools.japaneseGiven)
            return Artist(name: family.0 + given.0, sortName: random.chance(0.5) ? family.1 + given.1 : nil, script: script)
        case .kana:
            let base = random.pick(NamePools.kanaArtists)
            return Artist(name: random.chance(0.5) ? base : base + random.pick(NamePools.kanaWords), sortName: nil, script: script)
        case .korean:
            let length = random.int(2...4)
            return Artist(name: String((0..<length).map { _ in random.pick(NamePools.hangulSyllables) }), sortName: nil, script: script)
        case .cyrillic:
            return Artist(name: "\(random.pick(NamePools.cyrillicWords)) \(random.pick(NamePools.cyrillicWords))", sortName: nil, script: script)
        case .symbolic:
            return Artist(name: random.pick(NamePools.symbolic), sortName: nil, script: script)
        }
    }

    /// A title and, sometimes, its sort tag.
    func makeTitle(for script: Script, album: Bool, random: inout SeededRandom) -> (String, String?) {
        switch script {
        case .kanji, .kana:
            let first = random.pick(NamePools.japaneseWords)
            let second = random.pick(NamePools.japaneseWords)
            if random.chance(0.3) { return (random.pick(NamePools.kanaWords), nil) }
            return (first.0 + "の" + second.0, random.chance(0.5) ? first.1 + "の" + second.1 : nil)
        case .korean:
            return (String((0..<random.int(2...5)).map { _ in random.pick(NamePools.hangulSyllables) }), nil)
        case .cyrillic:
            return (random.pick(NamePools.cyrillicWords), nil)
        default:
            let core = "\(random.pick(NamePools.adjectives)) \(random.pick(NamePools.nouns))"
            switch random.int(0...9) {
            case 0: return ("The \(core)", random.chance(0.5) ? "\(core), The" : random.chance(0.2) ? random.pick(NamePools.blanks) : nil)
            case 1: return (album ? "Vol. \(random.int(1...20))" : "Track \(random.int(1...30))", nil)
            case 2: return ("\(core), Part \(random.int(1...12))", nil)
            case 3: return ("\(random.int(1...2025))", nil)
            case 4: return ("A \(core)", random.chance(0.3) ? "\(core), A" : nil)
            default: return (core, nil)
            }
        }
    }
}

/// The inline pictures of a generated legacy store: real JPEGs (a tinted gradient under noise) of
/// about `kib` KiB, `distinct` different ones cycled over the tracks. Every call with the same
/// arguments returns the same bytes, so tests can compare moved pictures with their originals.
public enum LegacyPictures {
    /// The picture of track number `index` (0-based): picture number `index % distinct`, encoded
    /// at the one side (per `kib`) that brings such pictures closest to `kib` KiB.
    public static func picture(index: Int, kib: Int, distinct: Int) -> Data {
        let key = Key(slot: index % max(1, distinct), kib: kib)
        if let cached = cache.withLock({ $0.pictures[key] }) { return cached }
        let side = cache.withLock({ $0.sides[kib] }) ?? fitSide(kib: kib)
        let picture = encode(slot: key.slot, side: side)
        cache.withLock { state in
            state.sides[kib] = side
            // Tests re-read the same few hundred pictures many times; a store of thousands of large
            // ones would not fit, and for those (visited once each) starting over costs nothing.
            if state.bytes + picture.count > cacheLimit {
                state.pictures.removeAll()
                state.bytes = 0
            }
            state.pictures[key] = picture
            state.bytes += picture.count
        }
        return picture
    }

    private struct Key: Hashable {
        let slot: Int
        let kib: Int
    }

    private struct State {
        var pictures: [Key: Data] = [:]
        var sides: [Int: Int] = [:]
        var bytes = 0
    }

    private static let cacheLimit = 64 << 20
    private static let cache = Locked(State())

    /// The side whose picture 0 is closest to `kib` KiB. Size grows with the area, so two
    /// corrections from a small probe land within a few hundred bytes; the result depends only on
    /// `kib` and the codec, so every process picks the same side.
    private static func fitSide(kib: Int) -> Int {
        let target = Double(kib * 1024)
        let header = Double(encode(slot: 0, side: 8).count)
        var side = 64
        var best = (side: 8, miss: abs(header - target))
        for _ in 0..<3 {
            let size = Double(encode(slot: 0, side: side).count)
            if abs(size - target) < best.miss { best = (side, abs(size - target)) }
            let scale = ((target - header) / max(1, size - header)).squareRoot()
            let next = min(4_096, max(8, Int((Double(side) * scale).rounded())))
            if next == side { break }
            side = next
        }
        let size = Double(encode(slot: 0, side: side).count)
        if abs(size - target) < best.miss { best = (side, abs(size - target)) }
        return best.side
    }

    /// Picture number `slot` at `side` pixels: a gradient in the slot's tint with noise over it,
    /// so every picture differs and none compresses to nothing.
    private static func encode(slot: Int, side: Int) -> Data {
        var random = SeededRandom(seed: UInt64(slot) &+ 0xA5A5)
        let tint = (0..<3).map { _ in Int(random.next() % 160) }
        var pixels = [UInt8](repeating: 255, count: side * side * 4)
        pixels.withUnsafeMutableBufferPointer { buffer in
            var noise: UInt64 = 0
            var left = 0
            for y in 0..<side {
                for x in 0..<side {
                    let ramp = (x + y) * 32 / side
                    let offset = (y * side + x) * 4
                    for channel in 0..<3 {
                        if left == 0 {
                            noise = random.next()
                            left = 8
                        }
                        buffer[offset + channel] = UInt8(min(255, tint[channel] + ramp + Int(noise & 0x3F)))
                        noise >>= 8
                        left -= 1
                    }
                }
            }
        }
        do {
            return try ImageCodec.encode(DecodedImage(width: side, height: side, bytesPerRow: side * 4, pixels: pixels), as: .jpeg(quality: 90))
        } catch {
            // A well-formed RGBA buffer always encodes; failing here means a broken codec build.
            preconditionFailure("cannot encode a legacy picture: \(error)")
        }
    }
}
