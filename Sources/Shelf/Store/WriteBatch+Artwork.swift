import CCrypto
import Foundation
import ShelfCore
import ShelfDatabase

/// A batch's pictures: added by content address, shown to loaders before the commit, and
/// collected when no track uses them any more.
extension WriteBatch {
    /// The bytes of a picture this batch added, before it commits (nil for any other ID).
    public func pendingArtworkData(_ id: ArtworkID) -> Data? {
        registeredArtwork.contains(id) ? pendingPictures?.data(id) : nil
    }

    /// Stores a picture and returns its ID. Pictures are content-addressed: the same bytes give the
    /// same ID, and no second copy is stored. A picture no track uses by the end of the batch is
    /// collected.
    @discardableResult
    public func addArtwork(_ data: Data) throws -> ArtworkID {
        guard !data.isEmpty else { throw LibraryError.invalidValue(field: "artwork", value: "0 bytes", reason: "empty picture") }
        let digest = Self.sha256(data)
        if let existing = try db.scalar(UUID.self, "SELECT id FROM artwork WHERE sha256 = ?", [digest]) {
            return ArtworkID(existing)
        }
        let id = ArtworkID()
        try db.execute(
            "INSERT INTO artwork (id, sha256, byte_count, created, data) VALUES (?, ?, ?, ?, ?)",
            [id.rawValue, digest, data.count, now, data])
        record(.artwork(id), .insert)
        pendingPictures?.register(id, data)
        registeredArtwork.append(id)
        artworkToCollect.insert(id)
        return id
    }

    /// Makes `picture` (from the `artist.*` file at `path`, `stamp` telling when it changes) the
    /// picture of an album artist; the picture it replaces is collected if nothing else uses it.
    public func setArtistPicture(albumArtist: GroupID, artist: GroupID, name: String, picture: Data, path: String, stamp: String) throws {
        let old = try db.scalar(UUID.self, "SELECT artwork_id FROM artist_picture WHERE album_artist_id = ?", [albumArtist.rawValue])
        let id = try addArtwork(picture)
        try db.execute(
            "INSERT OR REPLACE INTO artist_picture (album_artist_id, artist_id, name, artwork_id, path, stamp) VALUES (?, ?, ?, ?, ?, ?)",
            [albumArtist.rawValue, artist.rawValue, name, id.rawValue, path, stamp])
        if let old { artworkToCollect.insert(ArtworkID(old)) }
        touchedGroups.insert(LoggedGroup(kind: GroupKind.albumArtist.code, id: albumArtist.rawValue))
    }

    /// Forgets an album artist's `artist.*` picture (its file is gone).
    public func removeArtistPicture(albumArtist: GroupID) throws {
        if let old = try db.scalar(UUID.self, "SELECT artwork_id FROM artist_picture WHERE album_artist_id = ?", [albumArtist.rawValue]) {
            try db.execute("DELETE FROM artist_picture WHERE album_artist_id = ?", [albumArtist.rawValue])
            artworkToCollect.insert(ArtworkID(old))
            touchedGroups.insert(LoggedGroup(kind: GroupKind.albumArtist.code, id: albumArtist.rawValue))
        }
    }

    /// Deletes a picture that no track uses.
    public func deleteArtwork(_ id: ArtworkID) throws {
        guard try db.scalar(Int.self, "SELECT 1 FROM artwork WHERE id = ?", [id.rawValue]) != nil else {
            throw LibraryError.artworkNotFound(id)
        }
        if try db.scalar(
            Int.self, "SELECT 1 FROM track WHERE artwork_id = ?1 UNION ALL SELECT 1 FROM artist_picture WHERE artwork_id = ?1 LIMIT 1", [id.rawValue]) != nil
        {
            throw LibraryError.artworkInUse(id)
        }
        try db.execute("DELETE FROM artwork WHERE id = ?", [id.rawValue])
        record(.artwork(id), .delete)
    }

    /// The SHA-256 digest that addresses a picture.
    nonisolated static func sha256(_ data: Data) -> Data {
        var digest = [UInt8](repeating: 0, count: Int(SHA256_DIGEST_LENGTH))
        data.withUnsafeBytes { buffer in
            _ = SHA256(buffer.baseAddress?.assumingMemoryBound(to: UInt8.self), buffer.count, &digest)
        }
        return Data(digest)
    }
}
