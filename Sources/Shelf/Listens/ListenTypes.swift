import Foundation
import ShelfCore

/// Where a listen came from: the call or player that reported it. Imported listens name the
/// program they came from. Kept as text so that a newer source read by an older build survives.
public struct ListenSource: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    public let rawValue: String
    /// A source by its stored name.
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// Subsonic `scrobble` with `submission=true`.
    public static let scrobble = ListenSource(rawValue: "scrobble")
    /// Subsonic `reportPlayback` (the playbackReport extension) from an app.
    public static let playbackReport = ListenSource(rawValue: "reportPlayback")
    /// The server's own web page's player (it reports through `reportPlayback` as client `shelf-web`).
    public static let page = ListenSource(rawValue: "page")
    /// The server's jukebox, a file played to its end.
    public static let jukebox = ListenSource(rawValue: "jukebox")
    /// The native API (`POST /api/tracks/{id}/scrobble`) and the engine's own callers.
    public static let api = ListenSource(rawValue: "api")
    /// A listen imported from another program's export (`shelf import-from`).
    public static func imported(_ program: String) -> ListenSource { ListenSource(rawValue: "import:\(program)") }

    /// Whether listens of this source are scrobbled out: imports never are (the service has them).
    public var isScrobbled: Bool { !rawValue.hasPrefix("import:") }
}

/// One play by one user, as the listen log keeps it: the text of the track is copied in, so the
/// listen outlives its file (`track` becomes nil when the track is deleted).
public struct Listen: Sendable, Hashable, Codable {
    public var id: Int64
    public var user: UserID
    public var track: TrackID?
    /// When the play began.
    public var playedAt: Date
    /// Seconds heard, when the client said.
    public var heard: Double?
    public var source: ListenSource
    /// The app or device (Subsonic's `c`), empty when unknown.
    public var client: String
    public var artist: String
    public var title: String
    public var album: String
    public var albumArtist: String
    public var duration: Double?
    public var recordingMBID: String?
    public var releaseMBID: String?

    /// A listen with every field given.
    public init(
        id: Int64, user: UserID, track: TrackID?, playedAt: Date, heard: Double?, source: ListenSource, client: String,
        artist: String, title: String, album: String, albumArtist: String, duration: Double?, recordingMBID: String?,
        releaseMBID: String?
    ) {
        self.id = id
        self.user = user
        self.track = track
        self.playedAt = playedAt
        self.heard = heard
        self.source = source
        self.client = client
        self.artist = artist
        self.title = title
        self.album = album
        self.albumArtist = albumArtist
        self.duration = duration
        self.recordingMBID = recordingMBID
        self.releaseMBID = releaseMBID
    }

    enum CodingKeys: String, CodingKey {
        case id, user, track, playedAt, heard, source, client, artist, title, album, albumArtist, duration, recordingMBID, releaseMBID
    }

    /// Every key written, absent values as null, so a reader finds each field on every listen.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(user, forKey: .user)
        try c.encode(track, forKey: .track)
        try c.encode(playedAt, forKey: .playedAt)
        try c.encode(heard, forKey: .heard)
        try c.encode(source, forKey: .source)
        try c.encode(client, forKey: .client)
        try c.encode(artist, forKey: .artist)
        try c.encode(title, forKey: .title)
        try c.encode(album, forKey: .album)
        try c.encode(albumArtist, forKey: .albumArtist)
        try c.encode(duration, forKey: .duration)
        try c.encode(recordingMBID, forKey: .recordingMBID)
        try c.encode(releaseMBID, forKey: .releaseMBID)
    }
}

/// Listens written for other programs.
public enum ListenExport {
    /// One listen as a line of ListenBrainz's export and importer: `listened_at` in seconds and
    /// `track_metadata` with the names, the MusicBrainz IDs and the length.
    public static func listenBrainzLine(_ listen: Listen) throws -> String {
        // Written by hand (JSONText), keys sorted: two minutes through JSONSerialization for a
        // history of a million listens.
        var info: [(String, String)] = []
        if !listen.client.isEmpty { info.append(("media_player", JSONText.quoted(String(listen.client.prefix(100))))) }
        if let duration = listen.duration, duration > 0 { info.append(("duration_ms", String(Int((duration * 1000).rounded())))) }
        if let mbid = listen.recordingMBID { info.append(("recording_mbid", JSONText.quoted(mbid))) }
        if let mbid = listen.releaseMBID { info.append(("release_mbid", JSONText.quoted(mbid))) }
        info.append(("submission_client", JSONText.quoted("Shelf")))
        info.append(("submission_client_version", JSONText.quoted(EngineVersions.version)))
        if listen.client.isEmpty { info.append(("media_player", JSONText.quoted("Shelf"))) }
        var metadata: [(String, String)] = [
            ("additional_info", object(info)), ("artist_name", JSONText.quoted(listen.artist)), ("track_name", JSONText.quoted(listen.title)),
        ]
        if !listen.album.isEmpty { metadata.append(("release_name", JSONText.quoted(listen.album))) }
        return object([("listened_at", String(Int(listen.playedAt.timeIntervalSince1970))), ("track_metadata", object(metadata))])
    }

    /// A JSON object of already-written values, its keys in order.
    private static func object(_ pairs: [(String, String)]) -> String {
        "{" + pairs.sorted { $0.0 < $1.0 }.map { JSONText.quoted($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
    }

    /// One listen as ListenBrainz's JSON object; a now-playing notice has no `listened_at`.
    public static func listenBrainzObject(_ listen: Listen, playingNow: Bool = false) -> [String: Any] {
        var info: [String: Any] = ["media_player": "Shelf", "submission_client": "Shelf"]
        if let duration = listen.duration, duration > 0 { info["duration_ms"] = Int((duration * 1000).rounded()) }
        if let mbid = listen.recordingMBID { info["recording_mbid"] = mbid }
        if let mbid = listen.releaseMBID { info["release_mbid"] = mbid }
        // The app the listen was heard in is ListenBrainz's media player; Shelf submitted it.
        if !listen.client.isEmpty { info["media_player"] = String(listen.client.prefix(100)) }
        info["submission_client_version"] = EngineVersions.version
        var metadata: [String: Any] = ["artist_name": listen.artist, "track_name": listen.title, "additional_info": info]
        if !listen.album.isEmpty { metadata["release_name"] = listen.album }
        var object: [String: Any] = ["track_metadata": metadata]
        if !playingNow { object["listened_at"] = Int(listen.playedAt.timeIntervalSince1970) }
        return object
    }
}

/// A page of a user's listens, newest first, and the cursor of the next (nil at the end).
public struct ListenPage: Sendable {
    public var listens: [Listen]
    public var nextCursor: String?
}

/// The spans `listeningStats` covers, each rolling back from now.
public enum StatsPeriod: String, Sendable, CaseIterable, Codable {
    case week, month, year, all

    /// The days the period spans (nil: all time).
    public var days: Int? {
        switch self {
        case .week: 7
        case .month: 30
        case .year: 365
        case .all: nil
        }
    }
}

/// What a user played most in a period, and plays per day.
public struct ListeningStats: Sendable, Codable, Equatable {
    /// One artist, album or track and how many plays it had.
    public struct Entry: Sendable, Codable, Equatable {
        public var name: String
        /// The artist of an album or track; empty for an artist.
        public var artist: String
        /// The track's ID while it is in the library (tracks only).
        public var track: TrackID?
        public var plays: Int
    }

    /// Plays on one calendar day in the reader's time zone (`yyyy-MM-dd`).
    public struct Day: Sendable, Codable, Equatable {
        public var date: String
        public var plays: Int
    }

    public var period: StatsPeriod
    /// The start of the period (nil for all time) and now.
    public var from: Date?
    public var to: Date
    public var plays: Int
    /// Seconds heard (a play without a figure counts its track's length).
    public var seconds: Double
    public var artists: [Entry]
    public var albums: [Entry]
    public var tracks: [Entry]
    /// Every day of the period in order, days without plays included (all time: from the first play).
    public var days: [Day]
}

/// A service Shelf scrobbles to.
public enum ScrobbleService: String, Sendable, CaseIterable, Codable, CustomStringConvertible {
    case listenbrainz, lastfm
    public var description: String { rawValue }

    /// The name people know it by.
    public var title: String { self == .listenbrainz ? "ListenBrainz" : "Last.fm" }
}

/// Where one user's link to one service stands, as `shelf user show --json` and
/// `/api/me/scrobbling` show it: every field (absent ones as null) and `state` in one word.
public struct ScrobbleState: Sendable, Encodable, Equatable {
    public var service: ScrobbleService
    /// The user's name at the service (empty when the service did not say).
    public var account: String
    /// This link's own base URL, when it has one (otherwise the server's setting).
    public var url: String?
    public var linked: Date
    /// Set when the service refused the credentials for good: nothing is sent until relinked or resumed.
    public var paused: Date?
    public var pauseReason: String?
    /// Listens waiting to be sent, and those the service refused one by one (kept, not retried).
    public var queued: Int
    public var refused: Int
    public var sent: Int
    public var lastSent: Date?
    /// The last failure, for a queue that is retrying.
    public var lastError: String?

    /// `linked`, or `paused` after a refusal for good.
    public var state: String { paused == nil ? "linked" : "paused" }

    enum CodingKeys: String, CodingKey {
        case service, state, account, url, linked, paused, pauseReason, queued, refused, sent, lastSent, lastError
    }

    /// Every key written, absent values as null, so scripts find each field.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(service, forKey: .service)
        try c.encode(state, forKey: .state)
        try c.encode(account, forKey: .account)
        try c.encode(url, forKey: .url)
        try c.encode(linked, forKey: .linked)
        try c.encode(paused, forKey: .paused)
        try c.encode(pauseReason, forKey: .pauseReason)
        try c.encode(queued, forKey: .queued)
        try c.encode(refused, forKey: .refused)
        try c.encode(sent, forKey: .sent)
        try c.encode(lastSent, forKey: .lastSent)
        try c.encode(lastError, forKey: .lastError)
    }
}

/// What one user does not scrobble: listens of tracks in these libraries (IDs) or genres, or
/// played by these clients (Subsonic's `c`, compared without case).
public struct ScrobbleRules: Sendable, Codable, Equatable {
    public var libraries: [Int]
    public var genres: [String]
    public var clients: [String]

    /// Rules, empty by default (everything is scrobbled).
    public init(libraries: [Int] = [], genres: [String] = [], clients: [String] = []) {
        self.libraries = libraries
        self.genres = genres
        self.clients = clients
    }

    public var isEmpty: Bool { libraries.isEmpty && genres.isEmpty && clients.isEmpty }
}

/// A listen waiting in the outbox for one service.
public struct OutboxItem: Sendable, Hashable {
    public var id: Int64
    public var listen: Listen
    public var attempts: Int
    /// A request carrying it went out and its answer was never recorded (a crash, a timeout):
    /// it is sent again alone, so the service's duplicate check decides.
    public var uncertain: Bool
}

/// One user's queue for one service, with what the sender needs to reach it.
public struct OutboxQueue: Sendable, Hashable {
    public var user: UserID
    public var userName: String
    public var service: ScrobbleService
    public var url: String?
    /// When its first listen may be tried (nil: now).
    public var due: Date?
}

/// The rule the services share for a scrobble: a track longer than 30 s, heard for half its
/// length or four minutes, whichever is less. A listen whose time heard is unknown was judged
/// by its client (a Subsonic submission means the client counted it).
public enum ScrobbleRule {
    /// Whether a listen of a track of `duration` seconds, `heard` seconds heard, is scrobbled.
    public static func qualifies(duration: Double?, heard: Double?) -> Bool {
        if let duration, duration <= 30 { return false }
        guard let heard else { return true }
        guard let duration, duration > 0 else { return heard >= 240 }
        return heard >= min(duration / 2, 240)
    }
}
