import Shelf
import ShelfCore

/// `{"error":{"code":…,"message":…}}`: how every failure is printed and answered.
public struct ErrorDocument: Codable, Sendable {
    /// The error itself.
    public struct Body: Codable, Sendable {
        /// A stable machine-readable code (`usage`, `trackNotFound`, `tokenExpired`, …).
        public let code: String
        /// A sentence for people, naming the value at fault.
        public let message: String
    }
    /// The error.
    public let error: Body

    /// A document for `code` and `message`.
    public init(code: String, message: String) { error = Body(code: code, message: message) }
}

/// `{"items":[…],"nextCursor":"…"|null,"total":N}`: the page shape of tracks, search and the views.
public struct PageResult<Item: Encodable>: Encodable {
    /// The rows of this page.
    public let items: [Item]
    /// The cursor of the next page; null on the last, never absent.
    @NullWhenNil public var nextCursor: String?
    /// Rows in the whole list.
    public let total: Int

    /// A page from its parts.
    public init(items: [Item], nextCursor: String?, total: Int) {
        self.items = items
        self.nextCursor = nextCursor
        self.total = total
    }
}

/// A track as a list prints it: every `Track` field plus the row's `section`.
public struct ListedTrack: Encodable, Sendable {
    /// The whole track.
    public let track: Track
    /// The A–Z / kana / # section of the row in its list.
    public let section: String

    /// A row from its parts.
    public init(track: Track, section: String) {
        self.track = track
        self.section = section
    }

    enum Keys: String, CodingKey { case section }

    public func encode(to encoder: any Encoder) throws {
        try track.encode(to: encoder)
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(section, forKey: .section)
    }
}

/// `{"sections":[{"name":"A","firstIndex":0,"count":120},…]}`.
public struct SectionsDocument: Encodable, Sendable {
    /// The sections in list order.
    public let sections: [SectionInfo]
    /// A document of `sections`.
    public init(sections: [SectionInfo]) { self.sections = sections }
}

/// `{"ids":[…]}`: a whole list's track IDs in order.
public struct SnapshotDocument: Encodable, Sendable {
    /// The IDs in order.
    public let ids: [TrackID]
    /// A document of `ids`.
    public init(ids: [TrackID]) { self.ids = ids }
}

/// `{"deleted":[…]}`: the tracks a delete removed.
public struct DeletedTracksDocument: Encodable, Sendable {
    /// The removed track IDs.
    public let deleted: [TrackID]
    /// A document of `deleted`.
    public init(deleted: [TrackID]) { self.deleted = deleted }
}

/// `{"token":"shelf1.…"}`.
public struct TokenDocument: Encodable, Sendable {
    /// The current change token.
    public let token: ChangeToken
    /// A document of `token`.
    public init(token: ChangeToken) { self.token = token }
}

/// `{"changes":[…],"token":…,"hasMore":false}`: a page of the change feed.
public struct ChangesDocument: Encodable, Sendable {
    /// One entry per transaction (or one net summary).
    public let changes: [PersistentChange]
    /// The token to ask from next.
    public let token: ChangeToken
    /// Whether more changes wait after `token`.
    public let hasMore: Bool
    /// A document from its parts.
    public init(changes: [PersistentChange], token: ChangeToken, hasMore: Bool) {
        self.changes = changes
        self.token = token
        self.hasMore = hasMore
    }
}

/// `{"updated":[…],"skipped":[…],"failed":[…]}`: the report of an edit.
public struct EditDocument: Encodable, Sendable {
    /// Tracks whose files and rows were written.
    public let updated: [TrackID]
    /// Tracks left alone, with why.
    public let skipped: [EditResult.Skipped]
    /// Tracks whose file could not be written (it is unchanged).
    public let failed: [EditResult.Failed]
    /// The document of an edit's result.
    public init(_ result: EditResult) {
        updated = result.updated
        skipped = result.skipped
        failed = result.failed
    }
}

/// `{"exported":[…],"skipped":[…],"failed":[…]}`: the report of an export.
public struct ExportDocument: Encodable, Sendable {
    /// Files written and registered.
    public let exported: [ExportResult.Exported]
    /// Tracks not exported, with why.
    public let skipped: [EditResult.Skipped]
    /// Tracks whose export failed.
    public let failed: [EditResult.Failed]
    /// The document of an export's result.
    public init(_ result: ExportResult) {
        exported = result.exported
        skipped = result.skipped
        failed = result.failed
    }
}
