import Foundation
import Shelf
import ShelfCore
import Testing

@testable import ShelfServer

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Every Subsonic response type in both formats, and the envelope and errors of each endpoint
/// family, compared byte for byte with the files in `Snapshots/` (read them to review a change).
/// `make snapshots` (SHELF_UPDATE_SNAPSHOTS=1) rewrites the files from what the writers make now.
@Suite struct SubsonicSnapshotTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Snapshots")
    static let updating = ProcessInfo.processInfo.environment["SHELF_UPDATE_SNAPSHOTS"] == "1"

    // Fixed values, so the files never change unless the writers do.
    static let added = Date(timeIntervalSince1970: 1_764_583_358)  // 2025-12-01T10:02:38Z
    static let played = Date(timeIntervalSince1970: 1_780_000_000)
    static let starred = Date(timeIntervalSince1970: 1_790_000_000)

    /// A track whose texts need escaping in both formats: markup, quotes, a line break, a control
    /// character XML cannot carry, U+2028 (JSONP), Japanese and an emoji.
    static let track = Track(
        id: TrackID(42), path: "/music/Ünïcode/01 <Tom & \"Jerry\">.flac", fileSize: 31_337_000,
        title: "Tom & \"Jerry\" <live>\nencore\u{1}", artist: "宇多田ヒカル", album: "First Love\u{2028}🎵", albumArtist: "宇多田ヒカル",
        genre: "J-Pop", year: 1999, trackNumber: 3, discNumber: 1, duration: 254.6, bitrate: 1_011, sampleRate: 44_100, channels: 2,
        codec: "FLAC", comment: "a comment", sortTitle: "とむあんどじぇりー", sortAlbum: "ふぁーすとらぶ",
        artworkID: ArtworkID(rawValue: UUID(uuidString: "6F9619FF-8B86-D011-B42D-00C04FC964FF")!),
        dateAdded: added, details: details)
    /// OpenSubsonic's lists and objects: two artists, a composer and a performer with a part, gains
    /// with a missing peak, IDs, an ISRC, a mood.
    static var details: TrackDetails {
        var d = TrackDetails()
        d.artists = ["宇多田ヒカル", "Skrillex & <Friends>"]
        d.albumArtists = ["宇多田ヒカル"]
        d.genres = ["J-Pop", "R&B"]
        d.composers = ["宇多田ヒカル"]
        d.moods = ["Melancholic"]
        d.contributors = [Contributor(role: "performer", subRole: "piano", name: "Kazumasa Hashimoto")]
        d.musicBrainz = MusicBrainzIDs(recordingID: "6cd4b3d3-1a39-4d6b-9b4b-d5b2a2bd0f58")
        d.replayGain = ReplayGain(trackGain: -7.25, trackPeak: 0.9912, albumGain: -6.5)
        d.isrcs = ["JPTO09901234"]
        d.bpm = 92
        d.bitDepth = 24
        d.musicBrainz.releaseID = "aa4fb7b2-8d0a-4e5b-a7d3-5b5e7a0d6f8e"
        d.originalDate = "1999-03"
        d.releaseDate = "1999-03-10"
        d.releaseTypes = ["album"]
        d.labels = ["Toshiba-EMI"]
        d.discSubtitle = "Side <A>"
        d.albumVersion = "Remastered"
        return d
    }
    static let plain = Track(id: TrackID(7), path: "/music/untagged", fileSize: 10, duration: 0.3, dateAdded: added)
    static let data = UserTrackData(starred: starred, rating: 80, playCount: 12, lastPlayed: played)
    static let ids = TrackGroupIDs(album: GroupID(1_404_169_040_119_857_444), albumArtist: GroupID(2_133_912_177_411_236_041))
    static let song = SubsonicSong(track, data, ids: ids)
    static let bareSong = SubsonicSong(plain, nil)  // its unknown album and artist, as the engine files it
    static let albumItem = GroupItem(
        id: ids.album!, kind: .album, name: "First Love", sortName: "ふぁーすとらぶ", artist: "宇多田ヒカル", artistID: ids.albumArtist, trackCount: 14, albumCount: 1,
        duration: 3_456.4, year: 1999, genre: "J-Pop", artworkTrack: TrackID(42), section: "F")
    static let artistItem = GroupItem(
        id: ids.albumArtist!, kind: .albumArtist, name: "宇多田ヒカル", sortName: "うただひかる", trackCount: 30, albumCount: 2, duration: 7_000, artworkTrack: TrackID(42),
        section: "う")
    static let album = SubsonicAlbum(item: albumItem, created: added, starred: starred)
    static let artist = SubsonicArtist(item: artistItem, starred: starred)
    static let playlist = SubsonicPlaylist(
        id: PlaylistID(3), name: "Drive & <Night>", owner: "ann", isPublic: false, songCount: 2, duration: 300, comment: "made by tool #7",
        created: added,
        changed: played, hasCover: true, readOnly: false)

    /// Every type, as the element it is answered in.
    static let cases: [(String, @Sendable (inout SubsonicWriter) -> Void)] = [
        ("song", { $0.element("song", song) }),
        ("song-untagged", { $0.element("song", bareSong) }),
        (
            "song-nowPlaying",
            { w in
                var entry = song
                entry.nowPlaying = ("ann", 3, "Symfonium")
                w.container("nowPlaying", "entry", [entry])
            }
        ),
        ("album", { $0.element("album", album) }),
        (
            "album-child",
            { w in
                var child = album
                child.child = true
                w.container("albumList", "album", [child])
            }
        ),
        (
            "album-songs",
            { w in
                var full = album
                full.songs = [song, bareSong]
                w.element("album", full)
            }
        ),
        ("artist", { $0.element("artist", artist) }),
        (
            "artist-albums",
            { w in
                var full = artist
                full.albums = [album]
                w.element("artist", full)
            }
        ),
        (
            "artists-index",
            { w in
                w.open("artists")
                w.attribute("ignoredArticles", "the a an")
                w.list("index", [SubsonicIndex(name: "う", artists: [artist]), SubsonicIndex<SubsonicArtist>(name: "#", artists: [])])
                w.close()
            }
        ),
        (
            "genres",
            {
                $0.container(
                    "genres", "genre", [SubsonicGenre(name: "J-Pop", songCount: 30, albumCount: 2), SubsonicGenre(name: "R&B", songCount: 1, albumCount: 1)])
            }
        ),
        ("genres-empty", { $0.container("genres", "genre", [SubsonicGenre]()) }),
        ("playlists", { $0.container("playlists", "playlist", [playlist]) }),
        (
            "playlist-entries",
            { w in
                var full = playlist
                full.entries = [song, song]
                w.element("playlist", full)
            }
        ),
        ("musicFolders", { $0.container("musicFolders", "musicFolder", [SubsonicMusicFolder(id: 1, name: "Music")]) }),
        (
            "directory-artist",
            { w in
                var child = album
                child.child = true
                w.element("directory", SubsonicDirectory(id: .artist(ids.albumArtist!), name: "宇多田ヒカル", albumCount: 1, albums: [child]))
            }
        ),
        (
            "directory-album",
            { w in
                w.element(
                    "directory", SubsonicDirectory(id: .album(ids.album!), name: "First Love", parent: .artist(ids.albumArtist!), songCount: 1, songs: [song]))
            }
        ),
        ("lyrics", { $0.element("lyrics", SubsonicLyrics(artist: "宇多田ヒカル", title: "Automatic", text: "line one\nline <two>")) }),
        ("lyrics-none", { $0.element("lyrics", SubsonicLyrics(text: "")) }),
        (
            "lyricsList",
            { w in
                let synced = SubsonicStructuredLyrics(
                    displayArtist: "宇多田ヒカル", displayTitle: "Automatic", synced: true,
                    lines: [SubsonicLyricLine(start: 0, text: "七回目のベルで"), SubsonicLyricLine(start: 2_500, text: "")])
                let plain = SubsonicStructuredLyrics(synced: false, lines: [SubsonicLyricLine(text: "plain & simple")])
                w.container("lyricsList", "structuredLyrics", [synced, plain])
            }
        ),
        (
            "lyricsList-enhanced",
            { w in
                var enhanced = SubsonicStructuredLyrics(synced: true, lines: [SubsonicLyricLine(start: 1_000, text: "目を 開けて")])
                enhanced.kind = "main"
                enhanced.cueLines = [
                    SubsonicCueLine(
                        index: 0, start: 1_000, end: 2_400, value: "目を 開けて",
                        cues: [
                            SubsonicCueLine.Cue(start: 1_000, end: 1_500, byteStart: 0, byteEnd: 5, value: "目を"),
                            SubsonicCueLine.Cue(start: 1_500, end: 2_400, byteStart: 7, byteEnd: 15, value: "開けて"),
                        ])
                ]
                w.container("lyricsList", "structuredLyrics", [enhanced])
            }
        ),
        (
            "jukeboxPlaylist",
            { w in
                let state = JukeboxState(entries: [TrackID(42)], currentIndex: 0, playing: true, gain: 0.75, position: 61)
                w.element("jukeboxPlaylist", SubsonicJukebox(state: state, entries: [song]))
            }
        ),
        (
            "jukeboxStatus",
            { w in
                w.element(
                    "jukeboxStatus", SubsonicJukebox(state: JukeboxState(entries: [], currentIndex: -1, playing: false, gain: 1, position: 0), entries: nil))
            }
        ),
        (
            "playQueue",
            { w in
                w.element(
                    "playQueue",
                    SubsonicPlayQueue(current: TrackID(42), position: 61_500, username: "ann", changed: played, changedBy: "Tempo", entries: [song]))
            }
        ),
        (
            "playQueueByIndex",
            { w in
                w.element(
                    "playQueueByIndex",
                    SubsonicPlayQueue(
                        current: nil, currentIndex: 1, position: 500, username: "ann", changed: played, changedBy: "Symfonium", entries: [song, song]))
            }
        ),
        (
            "user",
            { w in
                w.element(
                    "user",
                    SubsonicUser(
                        user: User(
                            id: UserID(2), name: "bob <b>", isAdmin: false, isOwner: false, created: played, email: "bob@example.org",
                            roles: [.stream, .share], maxBitRate: 128), folders: [1, 3]))
            }
        ),
        (
            "bookmarks",
            { w in
                let mark = Bookmark(user: UserID(1), track: TrackID(42), position: 90_000, comment: "chapter \"2\"\nnext", created: played, changed: played)
                w.container("bookmarks", "bookmark", [SubsonicBookmark(bookmark: mark, username: "ann", entry: song)])
            }
        ),
        (
            "sonicMatch",
            { w in
                w.requiredList(
                    "sonicMatch",
                    [SubsonicSonicMatch(entry: song, similarity: 0.9421), SubsonicSonicMatch(entry: bareSong, similarity: 0.5)])
            }
        ),
        ("sonicMatch-empty", { w in w.requiredList("sonicMatch", [SubsonicSonicMatch]()) }),
        (
            "internetRadioStations",
            { w in
                let station = RadioStation(
                    id: SavedID(3), name: "Jazz & Blues", streamURL: "https://radio.example/jazz?x=1&y=2", homePageURL: nil, created: played)
                w.container("internetRadioStations", "internetRadioStation", [SubsonicRadioStation(station)])
            }
        ),
        (
            "shares",
            { w in
                let share = Share(
                    id: SavedID(5), token: "AAAAAAAAAAAAAAAAAAAAAA", user: UserID(1), description: "for you", created: played,
                    expires: played.addingTimeInterval(86_400), lastVisited: nil, visitCount: 2, tracks: [TrackID(42)])
                w.container(
                    "shares", "share", [SubsonicShare(share: share, url: "http://host:4040/share/AAAAAAAAAAAAAAAAAAAAAA", username: "ann", entries: [song])])
            }
        ),
        (
            "podcasts",
            { w in
                let channel = PodcastChannel(
                    id: SavedID(2), url: "https://pod.example/feed.xml?a=1&b=2", title: "Shelf <Talk>", description: "On \"libraries\"",
                    imageURL: "https://pod.example/cover.png", imageFile: "cover.png", status: .completed, errorMessage: nil, created: played, refreshed: played
                )
                let done = PodcastEpisode(
                    id: SavedID(7), channel: SavedID(2), guid: "g-7", title: "First", description: "Notes", published: played, url: "https://pod.example/1.mp3",
                    mimeType: "audio/mpeg", declaredSize: 1_000, duration: 183.4, status: .completed, errorMessage: nil, file: "7.mp3", size: 2_934_272,
                    bitRate: 128, codec: "mp3", created: played)
                let failed = PodcastEpisode(
                    id: SavedID(8), channel: SavedID(2), guid: "g-8", title: "Second", description: "", published: nil, url: "https://pod.example/2.mp3",
                    mimeType: nil, declaredSize: nil, duration: nil, status: .error, errorMessage: "could not download: larger than the limit", file: nil,
                    size: nil, bitRate: nil, codec: nil, created: played)
                let broken = PodcastChannel(
                    id: SavedID(3), url: "https://pod.example/404", title: "", description: "", imageURL: nil, imageFile: nil, status: .error,
                    errorMessage: "could not fetch the feed: the server answered HTTP 404", created: played, refreshed: nil)
                w.container(
                    "podcasts", "channel",
                    [
                        SubsonicPodcastChannel(channel: channel, episodes: [done, failed]), SubsonicPodcastChannel(channel: broken, episodes: []),
                    ])
            }
        ),
        (
            "transcodeDecision",
            { w in
                let source = SubsonicAPI.StreamDetails(container: "flac", codec: "flac", channels: 6, bitRate: 3_000_000, sampleRate: 96_000, bitDepth: 24)
                let target = SubsonicAPI.StreamDetails(container: "mp3", codec: "mp3", channels: 2, bitRate: 192_000, sampleRate: 48_000, bitDepth: nil)
                w.element(
                    "transcodeDecision",
                    SubsonicAPI.TranscodeDecision(
                        canDirectPlay: false, canTranscode: true, reasons: ["ContainerNotSupported,AudioCodecNotSupported"], errorReason: "",
                        params: "mp3-192-2", source: source, target: target))
            }
        ),
        ("scanStatus", { $0.element("scanStatus", SubsonicScanStatus(scanning: true, count: 120, total: 500)) }),
        ("scanStatus-idle", { $0.element("scanStatus", SubsonicScanStatus(scanning: false, count: 500_500)) }),
        ("openSubsonicExtensions", { $0.list("openSubsonicExtensions", SubsonicAPI.extensions) }),
        ("license", { $0.element("license", SubsonicLicense()) }),
        ("tokenInfo", { $0.element("tokenInfo", SubsonicTokenInfo(username: "ann")) }),
        ("artistInfo2-empty", { $0.element("artistInfo2", SubsonicEmpty()) }),
        ("ping", { _ in }),
    ]

    /// The failed envelopes, one per kind of failure an endpoint family answers.
    static let failures: [(String, SubsonicError)] = [
        ("error-missing", .missing("id")),
        ("error-invalid", .invalid("size", "-1", "an integer from 0 to 500")),
        ("error-notFound", .notFound("song tr-9")),
        ("error-credentials", SubsonicError(40, "wrong username or password")),
        ("error-notAuthorized", SubsonicError(50, "only an admin may call startScan")),
        ("error-notImplemented", SubsonicError(0, "Shelf does not implement getPodcasts yet", status: 501)),
        ("error-gone", SubsonicError(0, "Shelf will never implement getVideos: Shelf is a music library; it keeps no video", status: 410)),
    ]

    /// `bytes` against the file `name`, or the file written when updating.
    static func check(_ name: String, _ bytes: Data) throws {
        // The envelope carries Shelf's version, which every release changes; the files hold a placeholder.
        let version = EngineVersions.version
        let bytes = Data(
            String(decoding: bytes, as: UTF8.self).replacingOccurrences(of: "serverVersion=\"\(version)\"", with: "serverVersion=\"VERSION\"")
                .replacingOccurrences(of: "\"serverVersion\":\"\(version)\"", with: "\"serverVersion\":\"VERSION\"").utf8)
        let file = directory.appendingPathComponent(name)
        if updating {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try Data(bytes).write(to: file)
            return
        }
        let expected = try #require(try? Data(contentsOf: file), "\(name) is missing: run `make snapshots` and review it")
        #expect(Data(bytes) == expected, "\(name) differs from its snapshot:\n\(String(decoding: bytes, as: UTF8.self))")
    }

    @Test func everyTypeInBothFormats() throws {
        for (name, body) in Self.cases {
            for json in [false, true] {
                let bytes = SubsonicRenderer.document(json: json, body)
                try Self.check("\(name).\(json ? "json" : "xml")", bytes)
                // Each is well-formed in its format, whatever the snapshot says.
                if json {
                    #expect((try? JSONSerialization.jsonObject(with: Data(bytes))) != nil, "\(name).json does not parse")
                } else {
                    #expect((try? XMLDocument(data: Data(bytes))) != nil, "\(name).xml does not parse")
                }
            }
        }
    }

    /// XML for a client that declared an older API version (`v=1.8.0`): no OpenSubsonic child
    /// elements (an old desktop player stops reading an album at the first child that is not a
    /// `song`, so it read none of 1,200 songs); each `song` still follows its album at once.
    @Test func olderClientsGetXMLWithoutOpenSubsonicChildren() throws {
        let legacy = ["song", "album-songs", "artist", "artists-index"]
        for (name, body) in Self.cases where legacy.contains(name) {
            let bytes = SubsonicRenderer.$olderClient.withValue(true) { SubsonicRenderer.document(json: false, body) }
            try Self.check("\(name).legacy.xml", bytes)
            let document = try XMLDocument(data: Data(bytes))
            for element in try document.nodes(forXPath: "//album | //song | //artist") {
                let children = (element.children ?? []).compactMap(\.name)
                #expect(children.allSatisfy { name == "artists-index" ? $0 == "artist" : ["song", "album"].contains($0) }, "\(name): \(children)")
            }
            // JSON, and XML for a current client, are as before.
            let json = SubsonicRenderer.$olderClient.withValue(true) { SubsonicRenderer.document(json: true, body) }
            #expect(json == SubsonicRenderer.document(json: true, body))
        }
        #expect(SubsonicRenderer.isOlder("1.8.0") && SubsonicRenderer.isOlder("1.16.0") && SubsonicRenderer.isOlder("1.2"))
        #expect(!SubsonicRenderer.isOlder("1.16.1") && !SubsonicRenderer.isOlder("1.17") && !SubsonicRenderer.isOlder(nil) && !SubsonicRenderer.isOlder("x"))
    }

    @Test func failedEnvelopes() throws {
        for (name, error) in Self.failures {
            for format in [SubsonicFormat.xml, .json] {
                let response = SubsonicRenderer.failure(error, format: format)
                #expect(response.status == error.status)
                guard case .data(let body) = response.body else {
                    Issue.record("\(name): not a data body")
                    continue
                }
                try Self.check("\(name).\(format == .xml ? "xml" : "json")", body)
            }
        }
    }

    @Test func jsonpWrapsTheJSONDocument() throws {
        let response = SubsonicRenderer.response(
            SubsonicRenderer.document(json: true) { $0.element("license", SubsonicLicense()) }, format: .jsonp(callback: "cb"))
        guard case .data(let body) = response.body else {
            Issue.record("not a data body")
            return
        }
        try Self.check("license.jsonp", body)
    }

    /// The registry holds every endpoint once, each in a section, and says what each answers.
    @Test func registryNamesEveryEndpointOnce() {
        let names = SubsonicAPI.endpoints.map(\.name)
        #expect(Set(names).count == names.count)
        #expect(Set(SubsonicAPI.endpoints.map(\.section)) == Set(SubsonicAPI.Section.allCases))
        #expect(names.count >= 80)
        for name in ["ping", "getArtists", "search3", "stream", "getPlayQueue", "tokenInfo", "getTopSongs"] {
            guard case .served = SubsonicAPI.registry[name]?.policy else {
                Issue.record("\(name) is not served")
                continue
            }
        }
        for name in ["getVideos", "getChatMessages", "hls"] {
            guard case .never = SubsonicAPI.registry[name]?.policy else {
                Issue.record("\(name) is not 410")
                continue
            }
        }
        #expect(SubsonicAPI.registry["startScan"]?.access == .admin)
        #expect(SubsonicAPI.registry["getOpenSubsonicExtensions"]?.access == .anyone)
    }
}
