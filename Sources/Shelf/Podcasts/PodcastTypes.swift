import Foundation

/// Where a podcast channel or episode stands, in the words of the Subsonic spec.
public enum PodcastStatus: String, Sendable, Hashable, Codable, CaseIterable {
    /// Known from the feed; nothing fetched yet.
    case new
    /// Being fetched now (a feed being read, or an episode's audio being downloaded).
    case downloading
    /// Fetched whole: a channel's feed read, an episode's audio kept in the podcasts folder.
    case completed
    /// The last fetch failed; `errorMessage` says why.
    case error
    /// An episode whose file was deleted (it stays listed, so the next refresh does not bring it back).
    case deleted
    /// An episode the feed lists with nothing to download (no enclosure).
    case skipped
}

/// A podcast the library follows: a feed URL and what was read from it.
public struct PodcastChannel: Sendable, Hashable, Codable {
    public var id: SavedID
    /// The feed's address (`http` or `https`), as subscribed.
    public var url: String
    public var title: String
    public var description: String
    /// The picture the feed names, as given (fetched into the podcasts folder as `imageFile`).
    public var imageURL: String?
    /// The fetched picture's file name inside the channel's folder, once fetched.
    public var imageFile: String?
    public var status: PodcastStatus
    /// Why the last refresh failed (nil unless `status` is `.error`).
    public var errorMessage: String?
    public var created: Date
    /// When the feed was last read successfully.
    public var refreshed: Date?

    /// Builds a value; the store adds channels through `addPodcastChannel`.
    public init(
        id: SavedID, url: String, title: String, description: String, imageURL: String?, imageFile: String?,
        status: PodcastStatus, errorMessage: String?, created: Date, refreshed: Date?
    ) {
        self.id = id
        self.url = url
        self.title = title
        self.description = description
        self.imageURL = imageURL
        self.imageFile = imageFile
        self.status = status
        self.errorMessage = errorMessage
        self.created = created
        self.refreshed = refreshed
    }
}

/// One episode of a channel: what the feed says, and the downloaded file once it is complete.
public struct PodcastEpisode: Sendable, Hashable, Codable {
    public var id: SavedID
    public var channel: SavedID
    /// The feed's `guid` (Atom `id`; the enclosure URL when the feed gives neither).
    public var guid: String
    public var title: String
    public var description: String
    public var published: Date?
    /// The enclosure's address.
    public var url: String
    /// The enclosure's declared type and size (the feed's word, not checked).
    public var mimeType: String?
    public var declaredSize: Int64?
    /// Seconds, from the downloaded file when there is one, else the feed's `itunes:duration`.
    public var duration: Double?
    public var status: PodcastStatus
    public var errorMessage: String?
    /// The audio's file name inside the channel's folder; set only when the download completed.
    public var file: String?
    /// The downloaded file's size, bit rate (kbit/s) and codec.
    public var size: Int64?
    public var bitRate: Int?
    public var codec: String?
    public var created: Date

    /// Builds a value; the store adds episodes through `savePodcastFeed`.
    public init(
        id: SavedID, channel: SavedID, guid: String, title: String, description: String, published: Date?, url: String,
        mimeType: String?, declaredSize: Int64?, duration: Double?, status: PodcastStatus, errorMessage: String?,
        file: String?, size: Int64?, bitRate: Int?, codec: String?, created: Date
    ) {
        self.id = id
        self.channel = channel
        self.guid = guid
        self.title = title
        self.description = description
        self.published = published
        self.url = url
        self.mimeType = mimeType
        self.declaredSize = declaredSize
        self.duration = duration
        self.status = status
        self.errorMessage = errorMessage
        self.file = file
        self.size = size
        self.bitRate = bitRate
        self.codec = codec
        self.created = created
    }
}

/// What a downloaded episode file holds, read by the engine's tag reader.
public struct PodcastAudio: Sendable, Hashable {
    public var duration: Double?
    public var bitRate: Int?
    public var codec: String?

    /// Builds a value.
    public init(duration: Double?, bitRate: Int?, codec: String?) {
        self.duration = duration
        self.bitRate = bitRate
        self.codec = codec
    }
}
