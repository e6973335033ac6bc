import Foundation

/// A playlist, a playlist folder, or a smart playlist.
public struct Playlist: Sendable, Codable, Equatable, Identifiable {
    /// What kind of playlist this is.
    public enum Kind: Int, Sendable, Codable {
        /// An ordered list of tracks; a track may appear more than once.
        case regular = 0
        /// A folder holding other playlists and folders.
        case folder = 1
        /// A playlist whose contents follow stored rules.
        case smart = 2
    }

    /// Assigned by the store; never reused.
    public var id: PlaylistID
    public var name: String
    /// The folder holding it, if any.
    public var parentID: PlaylistID?
    public var kind: Kind
    /// The smart playlist's rules as JSON (nil for other kinds).
    public var rules: String?
    /// The owner's note about it (Subsonic's `comment`; tools find their playlists by a tag in it).
    public var comment: String?
    public var dateAdded: Date
    public var dateModified: Date

    /// Creates a playlist value; the store assigns `id` on insertion.
    public init(
        id: PlaylistID = PlaylistID(0), name: String, parentID: PlaylistID? = nil, kind: Kind = .regular,
        rules: String? = nil, comment: String? = nil, dateAdded: Date = Date(), dateModified: Date? = nil
    ) {
        self.comment = comment
        self.id = id
        self.name = name
        self.parentID = parentID
        self.kind = kind
        self.rules = rules
        self.dateAdded = dateAdded
        self.dateModified = dateModified ?? dateAdded
    }
}
