import Foundation
import ShelfCore
import ShelfDatabase
import ShelfTestSupport
import Testing

@testable import Shelf

/// Users, credentials and per-user data against real store files: what is stored (never a
/// password or key in clear), what it answers, and what cascades.
@Suite struct UserTests {
    /// A library with a few tracks and the users `names` (the first is the owner), their password
    /// being "pw-NAME". The directory is deleted when the returned value is released.
    func library(tracks: Int = 3, users names: [String] = ["ann", "bob"]) async throws -> (TemporaryDirectory, Library, [User]) {
        let dir = try TemporaryDirectory()
        let library = Library(directory: dir.url)
        if tracks > 0 {
            try await library.write { batch in for n in 1...tracks { try batch.insert(sampleTrack(n)) } }
        }
        var users: [User] = []
        for name in names { users.append(try await library.addUser(name: name, password: "pw-\(name)")) }
        return (dir, library, users)
    }

    func raw(_ dir: TemporaryDirectory) throws -> Connection {
        try Connection(path: dir.path("library.sqlite").path, mode: .readOnly)
    }

    @Test func addAuthenticateAndRefuseWrongPasswords() async throws {
        let (dir, library, users) = try await library(tracks: 0)
        defer { withExtendedLifetime(dir) {} }  // the directory goes with it
        let (ann, bob) = (users[0], users[1])
        #expect(ann.isOwner && ann.isAdmin)
        #expect(!bob.isOwner && !bob.isAdmin)
        #expect(try await library.users() == [ann, bob])
        #expect(try await library.authenticate(name: "ann", password: "pw-ann") == ann)
        #expect(try await library.authenticate(name: "ANN", password: "pw-ann") == ann)
        #expect(try await library.authenticate(name: "ann", password: "pw-bob") == nil)
        #expect(try await library.authenticate(name: "ann", password: "pw-ann ") == nil)
        #expect(try await library.authenticate(name: "nobody", password: "pw-ann") == nil)
        #expect(try await library.user(named: "BoB") == bob)
        #expect(try await library.user(id: bob.id) == bob)
        #expect(try await library.password(of: bob.id) == "pw-bob")
        let carol = try await library.addUser(name: "carol", password: "pw", admin: true)
        #expect(carol.isAdmin && !carol.isOwner)
    }

    @Test func duplicateNamesAreRefusedWithoutRegardToCase() async throws {
        let (dir, library, _) = try await library(tracks: 0, users: ["ann"])
        defer { withExtendedLifetime(dir) {} }  // the directory goes with it
        await #expect(throws: LibraryError.userExists("ann")) { try await library.addUser(name: "Ann", password: "x") }
        await #expect(throws: LibraryError.userExists("ann")) { try await library.addUser(name: "ann", password: "x") }
        #expect(try await library.users().count == 1)
    }

    @Test func badNamesAndPasswordsAreTypedErrors() async throws {
        let (dir, library, users) = try await library(tracks: 0, users: ["ann"])
        defer { withExtendedLifetime(dir) {} }  // the directory goes with it
        for name in ["", " ann", "ann ", "a\u{7}b", "tab\there", String(repeating: "x", count: 65)] {
            do {
                try await library.addUser(name: name, password: "pw")
                Issue.record("accepted \(name.debugDescription)")
            } catch let error as LibraryError {
                guard case .invalidUserName = error else {
                    Issue.record("\(error)")
                    continue
                }
            }
        }
        _ = try await library.addUser(name: String(repeating: "é", count: 64), password: "pw")
        _ = try await library.addUser(name: "日本 語", password: String(repeating: "p", count: 1_024))
        for password in ["", String(repeating: "p", count: 1_025), String(repeating: "é", count: 513)] {
            await #expect(throws: LibraryError.invalidPassword(reason: password.isEmpty ? "must not be empty" : "is longer than 1024 bytes")) {
                try await library.setPassword(users[0].id, password)
            }
        }
        await #expect(throws: LibraryError.userNotFound("ID 99")) { try await library.setPassword(UserID(99), "pw") }
    }

    @Test func storedPasswordIsEncryptedAndTheKeyFileIsPrivate() async throws {
        let (dir, library, users) = try await library(tracks: 0, users: ["ann", "bob"])
        try await library.setPassword(users[1].id, "pw-ann")  // the same password, another nonce
        let db = try raw(dir)
        let blobs = try db.query("SELECT password FROM user ORDER BY id") { try $0.data(0) }
        #expect(blobs.count == 2)
        let expectedLength: Int = 1 + 12 + 6 + 16  // version, nonce, "pw-ann", tag
        for blob in blobs {
            #expect(blob.range(of: Data("pw-ann".utf8)) == nil)
            #expect(blob.first == 1)
            #expect(blob.count == expectedLength)
        }
        #expect(blobs[0] != blobs[1])
        #expect(try db.scalar(Double.self, "SELECT password_changed FROM user WHERE id = ?", [users[1].id.rawValue]) != nil)
        let attributes = try FileManager.default.attributesOfItem(atPath: dir.path("secret.key").path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect((attributes[.size] as? NSNumber)?.intValue == 32)
        #expect(try await library.authenticate(name: "bob", password: "pw-ann") == users[1])
        #expect(try await library.authenticate(name: "bob", password: "pw-bob") == nil)
    }

    @Test func aBlobCopiedToAnotherUserDoesNotDecrypt() async throws {
        let (dir, library, users) = try await library(tracks: 0)
        do {
            let db = try Connection(path: dir.path("library.sqlite").path)
            try db.execute("UPDATE user SET password = (SELECT password FROM user WHERE id = ?) WHERE id = ?", [users[0].id.rawValue, users[1].id.rawValue])
        }
        let keyPath = dir.path("secret.key").path
        await #expect(throws: LibraryError.passwordUnreadable(user: "bob", keyPath: keyPath)) { try await library.password(of: users[1].id) }
        await #expect(throws: LibraryError.passwordUnreadable(user: "bob", keyPath: keyPath)) {
            try await library.authenticate(name: "bob", password: "pw-ann")
        }
        #expect(try await library.password(of: users[0].id) == "pw-ann")
    }

    @Test func keyFilesOfTheWrongSizeOrPermissionsAreRefused() async throws {
        let loose = try TemporaryDirectory()
        let looseKey = loose.path("secret.key")
        try Data(repeating: 7, count: 32).write(to: looseKey)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: looseKey.path)
        do {
            try await Library(directory: loose.url).addUser(name: "ann", password: "pw")
            Issue.record("accepted a key file readable by others")
        } catch let error as LibraryError {
            guard case .secretKeyFile(let path, let reason) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(path == looseKey.path && reason.contains("644"))
        }
        let short = try TemporaryDirectory()
        try Data(repeating: 7, count: 31).write(to: short.path("secret.key"))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: short.path("secret.key").path)
        await #expect(throws: LibraryError.secretKeyFile(path: short.path("secret.key").path, reason: "holds 31 bytes; a key is 32")) {
            try await Library(directory: short.url).addUser(name: "ann", password: "pw")
        }
    }

    @Test func racingCreatorsOfTheKeyFileAgreeOnOneKey() async throws {
        try await offCooperativePool {
            let dir = try TemporaryDirectory()
            let keys = Locked<[Data]>([])
            DispatchQueue.concurrentPerform(iterations: 8) { _ in
                if let key = try? SecretKey.load(directory: dir.url, create: true) { keys.withLock { $0.append(key.bytes) } }
            }
            let all = keys.withLock { $0 }
            #expect(all.count == 8)
            #expect(Set(all).count == 1)
            #expect(try Data(contentsOf: dir.path("secret.key")) == all[0])
            #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path) == ["secret.key"])
        }
    }

    @Test func apiKeysRoundTripAreStoredOnlyAsHashesAndCanBeRevoked() async throws {
        let (dir, library, users) = try await library(tracks: 0)
        let ann = users[0]
        let (info, key) = try await library.createAPIKey(for: ann.id)
        #expect(key.hasPrefix("shelf_\(info.id)_"))
        #expect(key.count == "shelf_".count + info.id.count + 1 + 43)
        #expect(info.userID == ann.id && info.lastUsed == nil)
        let t0 = Date()
        #expect(try await library.user(forAPIKey: key, now: t0) == ann)
        let used = try #require(try await library.apiKeys(of: ann.id).first?.lastUsed)
        #expect(abs(used.timeIntervalSince(t0)) < 0.001)
        // Within the minute the use is not written again; after it, it is.
        _ = try await library.user(forAPIKey: key, now: t0.addingTimeInterval(30))
        #expect(try await library.apiKeys(of: ann.id).first?.lastUsed == used)
        _ = try await library.user(forAPIKey: key, now: t0.addingTimeInterval(61))
        #expect(try await library.apiKeys(of: ann.id).first?.lastUsed.map { $0.timeIntervalSince(t0) > 60 } == true)
        #expect(try await library.user(forAPIKey: key + "x") == nil)
        #expect(try await library.user(forAPIKey: "shelf_nope") == nil)

        let db = try raw(dir)
        let row = try #require(
            try db.queryOne("SELECT id, sha256, quote(user_id) || quote(created) FROM api_key", []) {
                (try $0.string(0), try $0.data(1), try $0.string(2))
            })
        #expect(row.0 == info.id)
        #expect(row.1 == WriteBatch.sha256(Data(key.utf8)))
        // The secret is everything after "shelf_ID_": base64url may itself hold "_".
        let secret = String(key.dropFirst("shelf_\(info.id)_".count))
        #expect(secret.count == 43)
        let dump = try db.query("SELECT quote(id) || quote(sha256) || quote(user_id) || quote(created) || quote(last_used) FROM api_key") { try $0.string(0) }
        #expect(!dump.joined().contains(secret))

        let second = try await library.createAPIKey(for: ann.id)
        #expect(try await library.apiKeys(of: ann.id).map(\.id) == [info.id, second.info.id])
        try await library.revokeAPIKey(id: info.id)
        #expect(try await library.user(forAPIKey: key) == nil)
        #expect(try await library.user(forAPIKey: second.key) == ann)
        await #expect(throws: LibraryError.apiKeyNotFound(info.id)) { try await library.revokeAPIKey(id: info.id) }
        await #expect(throws: LibraryError.userNotFound("ID 42")) { try await library.createAPIKey(for: UserID(42)) }
    }

    @Test func sessionsExpireEndAndEndWithAPasswordChange() async throws {
        let (dir, library, users) = try await library(tracks: 0)
        let (ann, bob) = (users[0], users[1])
        let t0 = Date(timeIntervalSince1970: 1_800_000_000)
        let token = try await library.createSession(user: ann.id, now: t0)
        #expect(Data(base64Encoded: token.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/") + "=")?.count == 32)
        #expect(try await library.user(forSession: token, now: t0.addingTimeInterval(29 * 86_400)) == ann)
        #expect(try await library.user(forSession: token, now: t0.addingTimeInterval(30 * 86_400 + 1)) == nil)
        #expect(try await library.user(forSession: "unknown", now: t0) == nil)
        #expect(try raw(dir).scalar(Int.self, "SELECT count(*) FROM user_session WHERE sha256 = ?", [WriteBatch.sha256(Data(token.utf8))]) == 1)

        let other = try await library.createSession(user: ann.id, now: t0)
        try await library.deleteSession(other)
        #expect(try await library.user(forSession: other, now: t0) == nil)
        try await library.deleteSession(other)  // already ended: no error

        let bobs = try await library.createSession(user: bob.id, now: t0)
        try await library.setPassword(ann.id, "new")
        #expect(try await library.user(forSession: token, now: t0) == nil)
        #expect(try await library.user(forSession: bobs, now: t0) == bob)
        // A new session clears the expired ones on the way.
        _ = try await library.createSession(user: bob.id, now: t0.addingTimeInterval(31 * 86_400))
        #expect(try raw(dir).scalar(Int.self, "SELECT count(*) FROM user_session") == 1)
    }

    @Test func perUserDataIsIndependentAndTheOwnersWritesThrough() async throws {
        let (dir, library, users) = try await library(tracks: 3)
        defer { withExtendedLifetime(dir) {} }  // the directory goes with it
        let (ann, bob) = (users[0], users[1])
        let (one, two, three): (TrackID, TrackID, TrackID) = (1, 2, 3)
        try await library.write { batch in try batch.setStarred([one], by: ann.id, true) }
        try await library.write { batch in try batch.setStarred([two, two], by: ann.id, true) }
        try await library.write { batch in try batch.setStarred([two], by: bob.id, true) }
        #expect(try await library.starredTracks(of: ann.id) == [two, one])
        #expect(try await library.starredTracks(of: bob.id) == [two])

        let seq = try await library.changeLog().last?.seq ?? 0
        try await library.write { batch in try batch.setRating(one, by: bob.id, 20) }
        let bobs = try await library.changeLog(afterSeq: seq)
        #expect(bobs.map(\.objectID) == [1] && bobs.map(\.groups) == [.userData])
        #expect(try await library.track(one)?.rating == 0)
        try await library.write { batch in try batch.setRating(one, by: ann.id, 80) }
        let anns = try await library.changeLog(afterSeq: bobs.last!.seq)
        #expect(anns.map(\.groups) == [[.userData, .playStats]])
        #expect(try await library.track(one)?.rating == 80)

        let late = Date(timeIntervalSince1970: 1_900_000_000)
        let early = late.addingTimeInterval(-3_600)
        try await library.write { batch in
            try batch.recordPlay(three, by: bob.id, at: late)
            try batch.recordPlay(three, by: bob.id, at: early)
        }
        #expect(try await library.track(three)?.playCount == 0)
        try await library.write { batch in try batch.recordPlay(three, by: ann.id, at: early) }
        let track = try #require(try await library.track(three))
        #expect(track.playCount == 1 && track.lastPlayed == early)

        let annData = try await library.userTrackData(for: ann.id, tracks: [one, two, three])
        let bobData = try await library.userTrackData(for: bob.id, tracks: [one, two, three])
        #expect(annData[one]?.rating == 80 && annData[one]?.starred != nil && annData[three]?.playCount == 1)
        #expect(bobData[one] == UserTrackData(rating: 20))
        #expect(bobData[three]?.playCount == 2 && bobData[three]?.lastPlayed == late && bobData[three]?.starred == nil)
        #expect(bobData[two]?.starred != nil && bobData[two]?.rating == nil)

        // The read path (mirror or direct) sees the owner's write-through.
        let rated = try await library.list(LibraryQuery(sort: .title, filter: try FilterParser.parse("rating:>=80")), limit: 10)
        #expect(rated.total == 1)

        // Clearing a rating and a star leaves no row behind; nothing changed logs nothing.
        try await library.write { batch in
            try batch.setRating(one, by: bob.id, nil)
            try batch.setStarred([two], by: bob.id, false)
        }
        #expect(try await library.userTrackData(for: bob.id, tracks: [one, two]).isEmpty)
        let before = try await library.changeLog().last?.seq
        try await library.write { batch in try batch.setStarred([two], by: bob.id, false) }
        #expect(try await library.changeLog().last?.seq == before)
        try await library.write { batch in try batch.setRating(one, by: ann.id, nil) }
        #expect(try await library.track(one)?.rating == 0)

        await #expect(throws: LibraryError.trackNotFound(99)) { try await library.write { try $0.setStarred([99], by: ann.id, true) } }
        await #expect(throws: LibraryError.trackNotFound(99)) { try await library.write { try $0.recordPlay(99, by: ann.id, at: late) } }
        await #expect(throws: LibraryError.self) { try await library.write { try $0.setRating(one, by: ann.id, 101) } }
        await #expect(throws: LibraryError.userNotFound("ID 9")) { try await library.write { try $0.setRating(one, by: UserID(9), 1) } }
    }

    @Test func changesShowTheUserDataGroup() async throws {
        let (dir, library, users) = try await library(tracks: 2)
        defer { withExtendedLifetime(dir) {} }  // the directory goes with it
        let token = try await library.currentToken()
        try await library.write { batch in try batch.setStarred([2], by: users[1].id, true) }
        let feed = try await library.changes(since: token)
        #expect(feed.changes.count == 1)
        #expect(feed.changes.first?.tracks.updated == [UpdatedObject(id: .track(2), groups: .userData)])
        #expect(feed.changes.first?.tracks.updated(touching: .playStats).isEmpty == true)
        #expect(PropertyGroups(names: ["userData"]) == .userData && PropertyGroups.userData.names == ["userData"])
    }

    @Test func deletingAUserCascades() async throws {
        let (dir, library, users) = try await library(tracks: 2)
        let bob = users[1]
        let (_, key) = try await library.createAPIKey(for: bob.id)
        let session = try await library.createSession(user: bob.id)
        let playlist = try await library.write { batch in
            let id = try batch.createPlaylist(Playlist(name: "Bob's"))
            try batch.setStarred([1, 2], by: bob.id, true)
            try batch.recordPlay(1, by: bob.id, at: Date())
            try batch.setPlaylistOwner(id, bob.id, public: true)
            return id
        }
        #expect(try await library.playlistOwners() == [playlist: PlaylistOwnership(user: bob.id, isPublic: true)])
        try await library.deleteUser(bob.id)
        #expect(try await library.user(id: bob.id) == nil)
        #expect(try await library.user(forAPIKey: key) == nil)
        #expect(try await library.user(forSession: session) == nil)
        #expect(try await library.playlistOwners().isEmpty)
        let db = try raw(dir)
        for table in ["api_key", "user_session", "user_track", "playlist_owner"] {
            #expect(try db.scalar(Int.self, "SELECT count(*) FROM \(table)") == 0, "\(table)")
        }
        #expect(try await library.playlists().map(\.id) == [playlist])
        await #expect(throws: LibraryError.userNotFound("ID \(bob.id)")) { try await library.deleteUser(bob.id) }

        // Deleting a track takes every user's data about it along.
        try await library.write { batch in try batch.setStarred([1], by: users[0].id, true) }
        try await library.write { batch in try batch.deleteTrack(1) }
        #expect(try db.scalar(Int.self, "SELECT count(*) FROM user_track") == 0)
    }

    @Test func theLastAdminCannotBeDeletedOrDemotedAndOwnershipMoves() async throws {
        let (dir, library, users) = try await library(tracks: 0)
        defer { withExtendedLifetime(dir) {} }  // the directory goes with it
        let (ann, bob) = (users[0], users[1])
        await #expect(throws: LibraryError.lastAdmin("ann")) { try await library.deleteUser(ann.id) }
        await #expect(throws: LibraryError.lastAdmin("ann")) { try await library.setAdmin(ann.id, false) }
        try await library.setAdmin(bob.id, true)
        try await library.setAdmin(ann.id, false)
        #expect(try await library.user(id: ann.id)?.isAdmin == false)
        await #expect(throws: LibraryError.lastAdmin("bob")) { try await library.deleteUser(bob.id) }
        try await library.setOwner(bob.id)
        #expect(try await library.users().map(\.isOwner) == [false, true])
        try await library.setOwner(ann.id)
        try await library.setAdmin(ann.id, true)
        // The owner's role passes on when the owner is deleted: exactly one while users exist.
        try await library.deleteUser(ann.id)
        #expect(try await library.users() == [User(id: bob.id, name: "bob", isAdmin: true, isOwner: true, created: bob.created)])
    }

    @Test func playlistOwnershipIsSetAndCleared() async throws {
        let (dir, library, users) = try await library(tracks: 0)
        defer { withExtendedLifetime(dir) {} }  // the directory goes with it
        let (a, b) = try await library.write { batch in
            (try batch.createPlaylist(Playlist(name: "A")), try batch.createPlaylist(Playlist(name: "B")))
        }
        let seq = try await library.changeLog().last?.seq ?? 0
        try await library.write { batch in
            try batch.setPlaylistOwner(a, users[0].id, public: false)
            try batch.setPlaylistOwner(b, users[1].id, public: true)
        }
        #expect(try await library.changeLog(afterSeq: seq).map(\.groups) == [.metadata, .metadata])
        #expect(
            try await library.playlistOwners() == [
                a: PlaylistOwnership(user: users[0].id, isPublic: false), b: PlaylistOwnership(user: users[1].id, isPublic: true),
            ])
        try await library.write { batch in try batch.setPlaylistOwner(a, nil, public: false) }
        #expect(try await library.playlistOwners().keys.sorted() == [b])
        await #expect(throws: LibraryError.playlistNotFound(77)) { try await library.write { try $0.setPlaylistOwner(77, nil, public: false) } }
    }

    @Test func noCredentialAppearsInEncodingsOrDescriptions() async throws {
        let (dir, library, users) = try await library(tracks: 0, users: ["ann"])
        defer { withExtendedLifetime(dir) {} }  // the directory goes with it
        let (info, key) = try await library.createAPIKey(for: users[0].id)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let userJSON = String(decoding: try encoder.encode(users[0]), as: UTF8.self)
        #expect(userJSON.hasPrefix("{\"admin\":true,\"created\":"))
        #expect(userJSON.contains("\"id\":1,\"maxBitRate\":0,\"name\":\"ann\",\"owner\":true,\"roles\":["))
        let keyJSON = String(decoding: try encoder.encode(info), as: UTF8.self)
        #expect(keyJSON.contains("\"lastUsed\":null") && keyJSON.contains("\"userID\":1"))
        for text in [userJSON, keyJSON, users[0].description, info.description, String(describing: users[0])] {
            #expect(!text.contains("pw-ann") && !text.contains(key) && !text.contains("password"))
        }
        #expect(try JSONDecoder().decode(User.self, from: try JSONEncoder().encode(users[0])) == users[0])
    }

    @Test func aVersion2StoreMigratesTo3KeepingItsTracks() async throws {
        let dir = try TemporaryDirectory()
        do {
            let db = try Connection(path: dir.path("library.sqlite").path)
            _ = try db.pragma("journal_mode = WAL")
            // The current insert names the details (version 6) and missing_since (version 10) columns: temporary ones take their NULLs.
            try db.execute(
                script: Schema.version2
                    + "; ALTER TABLE track ADD COLUMN details TEXT; ALTER TABLE track ADD COLUMN missing_since REAL; PRAGMA user_version = 2;")
            try db.execute("INSERT INTO meta (key, value) VALUES ('store_id', ?)", [UUID().uuidString])
            let insert = try db.prepare(TrackRow.insert)
            for n in 1...5 {
                insert.reset()
                try insert.bindNull(at: 1)
                try TrackRow.bindFields(sampleTrack(n), to: insert, from: 2)
                try insert.run()
            }
            try db.execute(script: "ALTER TABLE track DROP COLUMN details; ALTER TABLE track DROP COLUMN missing_since;")
        }
        let library = Library(directory: dir.url)
        let info = try await library.info()
        #expect(info.schemaVersion == Schema.currentVersion && info.trackCount == 5)
        #expect(try await library.track(3)?.title == "Song 3")
        let ann = try await library.addUser(name: "ann", password: "pw")
        try await library.write { batch in try batch.setRating(3, by: ann.id, 60) }
        #expect(try await library.track(3)?.rating == 60)
    }

    /// A saved play queue goes through the change log: made, replaced, cleared and gone with its
    /// user, each a change of `playQueues`; a reader sees only their own queue.
    @Test func playQueuesAreInTheChangeLog() async throws {
        let (dir, library, users) = try await library()
        defer { withExtendedLifetime(dir) {} }
        let (ann, bob) = (users[0], users[1])
        let start = try await library.currentToken()
        func queues(since token: ChangeToken) async throws -> [String] {
            try await library.changes(since: token).changes.flatMap { change in
                change.playQueues.inserted.map { "insert \($0)" } + change.playQueues.updated.map { "update \($0.id)" }
                    + change.playQueues.deleted.map { "delete \($0)" }
            }
        }
        try await library.write { try $0.savePlayQueue(of: ann.id, tracks: [TrackID(1), TrackID(2)], current: TrackID(2), position: 10, changedBy: "A") }
        try await library.write { try $0.savePlayQueue(of: ann.id, tracks: [TrackID(1)], current: nil, position: 0, changedBy: "B") }
        // The same queue saved again (a client's timer) logs nothing.
        let saved = try await library.currentToken()
        try await library.write { try $0.savePlayQueue(of: ann.id, tracks: [TrackID(1)], current: nil, position: 0, changedBy: "B") }
        #expect(try await library.currentToken() == saved)
        try await library.write { try $0.savePlayQueue(of: bob.id, tracks: [TrackID(3)], current: nil, position: 0, changedBy: "C") }
        try await library.write { try $0.savePlayQueue(of: ann.id, tracks: [], current: nil, position: 0, changedBy: "D") }
        let middle = try await library.currentToken()
        // Clearing a queue that is not there changes nothing.
        try await library.write { try $0.savePlayQueue(of: ann.id, tracks: [], current: nil, position: 0, changedBy: "E") }
        #expect(try await library.currentToken() == middle)
        try await library.write { try $0.deleteUser(bob.id) }
        #expect(
            try await queues(since: start) == [
                "insert play queue of user \(ann.id)", "update play queue of user \(ann.id)", "insert play queue of user \(bob.id)",
                "delete play queue of user \(ann.id)", "delete play queue of user \(bob.id)",
            ])
        // Each reader hears of their own queue only.
        let seenByAnn = try await library.changes(since: start).changes.map { $0.seen(by: ann.id) }
        #expect(seenByAnn.flatMap { $0.playQueues.inserted + $0.playQueues.deleted }.allSatisfy { $0 == .playQueue(ann.id) })
        #expect(seenByAnn.flatMap(\.playQueues.inserted).count == 1)
        // The net summary folds them: ann's made and cleared is nothing; bob's made then gone with him is nothing too.
        let net = try await library.changeSummary(since: start)
        #expect(net.playQueues.isEmpty)
    }

    @Test func aLegacyStoreMigratesAllTheWayToTheCurrentVersion() async throws {
        let dir = try TemporaryDirectory()
        try LegacyStore.create(at: dir.url, tracks: [sampleTrack(1), sampleTrack(2)]) { _ in nil }
        let library = Library(directory: dir.url)
        let report = try await library.migrateLegacyStore()
        #expect(report.fromVersion == 1)
        let db = try raw(dir)
        #expect(try db.scalar(Int.self, "PRAGMA user_version") == Schema.currentVersion)
        #expect(
            try db.scalar(
                Int.self,
                "SELECT count(*) FROM sqlite_master WHERE name IN ('user', 'user_track', 'playlist_owner', 'user_group_star', 'play_queue', 'play_queue_item')")
                == 6)
        #expect(try db.scalar(Int.self, "SELECT count(*) FROM pragma_table_info('track') WHERE name IN ('details', 'sidecars')") == 2)
        #expect(try await library.info().trackCount == 2)
        #expect(try db.scalar(Int.self, "SELECT count(*) FROM sqlite_master WHERE name IN ('podcast_channel', 'podcast_episode')") == 2)
        #expect(try await library.migrateLegacyStore().fromVersion == Schema.currentVersion)
    }
}
