import Foundation
import ShelfCore

/// The programs `shelf import-from` reads.
public enum ForeignSource: String, Sendable, CaseIterable, Codable, CustomStringConvertible {
    /// Navidrome's `navidrome.db` (SQLite).
    case navidrome
    /// beets' `library.db` (SQLite), with `config.yaml` beside it for its music directory.
    case beets
    /// The `Library.xml` Apple Music and iTunes write with File › Library › Export Library.
    case itunes
    /// ListenBrainz's export: JSON lines, a JSON array, or a folder of `.jsonl` files.
    case listenbrainz
    /// A Last.fm scrobble export as CSV: artist, album, title, date (UTC).
    case lastfm

    public var description: String { rawValue }
}

/// How `shelf import-from` runs.
public struct ForeignImportOptions: Sendable {
    /// The Shelf user the data goes to; nil: for Navidrome, each of its users by name (made when
    /// missing); for the others, the library's owner.
    public var user: String?
    /// Path prefixes to rewrite before matching by path (`--map OLD=NEW`), tried in order.
    public var mappings: [(old: String, new: String)]
    /// Report what would be done without writing.
    public var dryRun: Bool
    /// Told how far the writing has come (done, total), after each transaction.
    public var progress: (@Sendable (Int, Int) -> Void)?

    /// Options with every default (the owner, no mapping, writing).
    public init(user: String? = nil, mappings: [(old: String, new: String)] = [], dryRun: Bool = false, progress: (@Sendable (Int, Int) -> Void)? = nil) {
        self.user = user
        self.mappings = mappings
        self.dryRun = dryRun
        self.progress = progress
    }
}

/// One item of the source that was not applied, and why (never guessed).
public struct ForeignIssue: Sendable, Codable, Equatable {
    /// `track`, `listen`, `playlist item`, `album`, `artist`, `queue item`, `bookmark`.
    public var kind: String
    /// What the source says it was: artist – title, and its path when it has one.
    public var item: String
    /// `ambiguous` or `unmatched`.
    public var outcome: String
    public var reason: String
}

/// What an import found and did. `matched`, `ambiguous` and `unmatched` count the source's
/// tracks (and listens); `applied` counts what changed in Shelf (zero the second time).
public struct ForeignImportReport: Sendable, Codable, Equatable {
    /// What was written, by kind.
    public struct Applied: Sendable, Codable, Equatable {
        public var stars = 0
        public var ratings = 0
        /// Plays added to counts (the difference from what an earlier import of the same source added).
        public var plays = 0
        public var listens = 0
        public var playlists = 0
        public var playlistItems = 0
        public var queues = 0
        public var bookmarks = 0
        public var albumStars = 0
        public var artistStars = 0
        public var musicBrainzIDs = 0
        /// Tracks whose date added moved back to when the source first had them.
        public var datesAdded = 0
    }

    public var source: ForeignSource
    public var path: String
    public var dryRun: Bool
    public var matched = 0
    public var ambiguous = 0
    public var unmatched = 0
    /// Users made for the source's users (they set a password with `shelf user passwd`).
    public var usersCreated: [String] = []
    /// The Shelf users the data went to.
    public var users: [String] = []
    public var applied = Applied()
    public var items: [ForeignIssue] = []

    init(source: ForeignSource, path: String, dryRun: Bool) {
        self.source = source
        self.path = path
        self.dryRun = dryRun
    }
}

/// A track as another program names it: the fields matching may use.
struct ForeignTrack: Sendable, Hashable {
    /// The source's own key (an ID, a persistent ID, or the text itself for listens).
    var key: String
    var path: String?
    var mbid: String?
    var artist: String
    var title: String
    var album: String?
    var duration: Double?

    var label: String {
        "\(artist.isEmpty ? "?" : artist) – \(title.isEmpty ? "?" : title)" + (path.map { " (\($0))" } ?? "")
    }
}

/// What one of the source's users keeps about one track.
struct ForeignTrackData: Sendable {
    var track: ForeignTrack
    var starred: Date?
    /// 0–100, nil for none.
    var rating: Int?
    var plays = 0
    var lastPlayed: Date?
    var skips = 0
    /// MusicBrainz IDs the source knows (beets), filled in where Shelf has none.
    var recordingID: String?
    var releaseID: String?
}

/// A playlist of the source, in its order.
struct ForeignPlaylist: Sendable {
    var key: String
    var name: String
    var comment: String
    var isPublic: Bool
    var items: [ForeignTrack]
}

/// A listen of the source (ListenBrainz, Last.fm).
struct ForeignListen: Sendable {
    var track: ForeignTrack
    var playedAt: Date
}

/// One user's data in the source.
struct ForeignUser: Sendable {
    /// The source's name for them; nil for sources without users (the target user takes it).
    var name: String?
    /// The key the source knows them by, part of `import_applied`'s source so two users' counts stay apart.
    var key: String
    var tracks: [ForeignTrackData] = []
    var albumStars: [(album: String, albumArtist: String, starred: Date)] = []
    var artistStars: [(name: String, starred: Date)] = []
    var playlists: [ForeignPlaylist] = []
    var queue: (items: [ForeignTrack], current: Int?, positionMs: Int, changedBy: String)?
    var bookmarks: [(track: ForeignTrack, positionMs: Int, comment: String)] = []
    var listens: [ForeignListen] = []
    /// When each track came into the source's library (Apple's Date Added).
    var dateAdded: [ForeignTrack: Date] = [:]
}

/// Everything read from a source, before matching.
struct ForeignData: Sendable {
    /// Names the source in `import_applied` (the program and its own ID when it has one).
    var sourceKey: String
    var users: [ForeignUser]
}
