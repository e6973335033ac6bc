import CCrypto
import Foundation
import ShelfCore

/// Random bytes, digests, encodings and comparisons for credentials, all from OpenSSL.
enum Secrets {
    /// `count` bytes from OpenSSL's CSPRNG; a failure (an unseeded generator) is a hard error,
    /// never a weaker fallback.
    static func randomBytes(_ count: Int) -> Data {
        var bytes = [UInt8](repeating: 0, count: count)
        guard RAND_bytes(&bytes, Int32(count)) == 1 else { fatalError("RAND_bytes failed: OpenSSL's random generator is unavailable") }
        return Data(bytes)
    }

    /// The SHA-256 of a credential's UTF-8 bytes: what the store keeps instead of the credential.
    static func sha256(_ text: String) -> Data { WriteBatch.sha256(Data(text.utf8)) }

    /// Base64url without padding, so that tokens sit in URLs and headers unescaped.
    static func base64url(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// `count` random characters of a lowercase base-32 alphabet: short public IDs with no `_`
    /// or `-`, so they read cleanly inside a key.
    static func randomID(_ count: Int) -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz234567")
        return String(randomBytes(count).map { alphabet[Int($0 & 31)] })
    }

    /// Whether `a` equals `b`, in time that depends on neither: both are hashed first, so even
    /// their lengths are compared in constant time.
    static func constantTimeEqual(_ a: Data, _ b: Data) -> Bool {
        let x = WriteBatch.sha256(a)
        let y = WriteBatch.sha256(b)
        return x.withUnsafeBytes { xb in y.withUnsafeBytes { yb in CRYPTO_memcmp(xb.baseAddress, yb.baseAddress, x.count) == 0 } }
    }
}

/// The 32-byte key that encrypts a library's stored passwords, kept in `secret.key` beside
/// `library.sqlite` so that a copy of the database alone does not reveal them.
struct SecretKey: Sendable {
    static let fileName = "secret.key"
    static let length = 32

    let bytes: Data
    let path: String

    /// Keys already read, by path: a Subsonic request decrypts a password each time, and the file
    /// does not change under a running library.
    private static let cache = Locked<[String: SecretKey]>([:])

    /// The key of the library in `directory`; `create` makes it when absent (only writes do, so
    /// that a read never leaves a new key beside passwords encrypted with another).
    static func load(directory: URL, create: Bool) throws -> SecretKey {
        let path = directory.appendingPathComponent(fileName).path
        if let cached = cache.withLock({ $0[path] }) { return cached }
        let key = try read(path) ?? (create ? try make(path, in: directory) : nil)
        guard let key else { throw LibraryError.secretKeyFile(path: path, reason: "is missing, so the stored passwords cannot be read") }
        cache.withLock { $0[path] = key }
        return key
    }

    /// The key of the library in `directory`, or nil when it has none yet (no user was made);
    /// a key file that is there but unreadable or too open is still an error. Not cached, so a
    /// backup reads the file as it is now.
    static func loadIfPresent(directory: URL) throws -> SecretKey? {
        try read(directory.appendingPathComponent(fileName).path)
    }

    /// Drops the cached key of the library in `directory`: after a restore the file is another.
    static func forget(directory: URL) {
        let path = directory.appendingPathComponent(fileName).path
        cache.withLock { $0[path] = nil }
    }

    /// Writes `bytes` as the key of the library in `directory` (a restore), with mode 0600 and
    /// the same whole-or-nothing publishing as a new key; refuses to replace an existing key.
    static func install(_ bytes: Data, directory: URL) throws {
        let path = directory.appendingPathComponent(fileName).path
        guard bytes.count == length else {
            throw LibraryError.secretKeyFile(path: path, reason: "from the backup holds \(bytes.count) bytes; a key is \(length)")
        }
        guard try publish(bytes, at: path, in: directory) else {
            throw LibraryError.secretKeyFile(path: path, reason: "cannot be created: \(String(cString: strerror(EEXIST)))")
        }
    }

    /// The key in the file at `path`, nil when there is none; refuses a file of the wrong size or
    /// one that anyone but its owner may read or write.
    private static func read(_ path: String) throws -> SecretKey? {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw LibraryError.secretKeyFile(path: path, reason: "cannot be opened: \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw LibraryError.secretKeyFile(path: path, reason: "cannot be examined: \(String(cString: strerror(errno)))")
        }
        guard info.st_mode & S_IFMT == S_IFREG else { throw LibraryError.secretKeyFile(path: path, reason: "is not a regular file") }
        let mode = info.st_mode & 0o777
        guard mode & 0o077 == 0 else {
            throw LibraryError.secretKeyFile(
                path: path, reason: "has permissions \(String(mode, radix: 8)); it must be 600 (chmod 600 \(path))")
        }
        guard info.st_size == length else {
            throw LibraryError.secretKeyFile(path: path, reason: "holds \(info.st_size) bytes; a key is \(length)")
        }
        var bytes = [UInt8](repeating: 0, count: length)
        var done = 0
        while done < length {
            let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, length - done, off_t(done)) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { throw LibraryError.secretKeyFile(path: path, reason: "cannot be read: \(String(cString: strerror(errno)))") }
            done += n
        }
        return SecretKey(bytes: Data(bytes), path: path)
    }

    /// A new random key, published whole or not at all; a racing second creator reads the
    /// winner's key instead of its own.
    private static func make(_ path: String, in directory: URL) throws -> SecretKey {
        let key = Secrets.randomBytes(length)
        guard try publish(key, at: path, in: directory) else {
            guard let winner = try read(path) else {
                throw LibraryError.secretKeyFile(path: path, reason: "cannot be created: \(String(cString: strerror(EEXIST)))")
            }
            return winner
        }
        return SecretKey(bytes: key, path: path)
    }

    /// Writes `bytes` to a private temporary file (O_CREAT|O_EXCL, 0600), flushes it, and gives
    /// it the name `path` with link(2): the key file appears whole or not at all, and never
    /// replaces one that is there (false: the name was taken). The folder is flushed too, since
    /// the name must survive a crash, or the passwords encrypted next would be lost.
    private static func publish(_ bytes: Data, at path: String, in directory: URL) throws -> Bool {
        let temporary = path + ".new-\(Secrets.randomID(12))"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw LibraryError.secretKeyFile(path: path, reason: "cannot be created: \(String(cString: strerror(errno)))") }
        defer { unlink(temporary) }
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, bytes.count) }
        let synced = fsync(fd) == 0
        let failure = errno
        close(fd)
        guard written == bytes.count, synced else {
            throw LibraryError.secretKeyFile(path: path, reason: "cannot be written: \(String(cString: strerror(failure)))")
        }
        if link(temporary, path) != 0 {
            guard errno == EEXIST else {
                throw LibraryError.secretKeyFile(path: path, reason: "cannot be created: \(String(cString: strerror(errno)))")
            }
            return false
        }
        let dir = open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dir >= 0 {
            fsync(dir)
            close(dir)
        }
        return true
    }
}

/// AES-256-GCM over a user's password: `version ‖ nonce(12) ‖ ciphertext ‖ tag(16)`, with the
/// version and the user's ID as associated data so that a blob copied to another row fails.
enum PasswordCipher {
    static let version: UInt8 = 1
    static let nonceLength = 12
    static let tagLength = 16

    private static func associatedData(_ user: UserID) -> [UInt8] {
        var id = UInt64(bitPattern: user.rawValue).bigEndian
        return [version] + withUnsafeBytes(of: &id) { Array($0) }
    }

    /// Encrypts `password` for `user` under `key` with a fresh random nonce.
    static func seal(_ password: String, user: UserID, key: SecretKey) throws -> Data {
        let plaintext = Array(password.utf8)
        let nonce = Array(Secrets.randomBytes(nonceLength))
        let aad = associatedData(user)
        guard let context = EVP_CIPHER_CTX_new() else { throw failure("EVP_CIPHER_CTX_new") }
        defer { EVP_CIPHER_CTX_free(context) }
        var ciphertext = [UInt8](repeating: 0, count: plaintext.count + 16)
        var tag = [UInt8](repeating: 0, count: tagLength)
        var length: Int32 = 0
        var total = 0
        let ok: Bool = key.bytes.withUnsafeBytes { keyBytes in
            let keyPointer = keyBytes.bindMemory(to: UInt8.self).baseAddress
            guard EVP_EncryptInit_ex(context, EVP_aes_256_gcm(), nil, nil, nil) == 1,
                EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_IVLEN, Int32(nonceLength), nil) == 1,
                EVP_EncryptInit_ex(context, nil, nil, keyPointer, nonce) == 1,
                EVP_EncryptUpdate(context, nil, &length, aad, Int32(aad.count)) == 1,
                EVP_EncryptUpdate(context, &ciphertext, &length, plaintext, Int32(plaintext.count)) == 1
            else { return false }
            total = Int(length)
            let finished = ciphertext.withUnsafeMutableBufferPointer { buffer in
                EVP_EncryptFinal_ex(context, buffer.baseAddress! + total, &length) == 1
            }
            guard finished else { return false }
            total += Int(length)
            return EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, Int32(tagLength), &tag) == 1
        }
        guard ok else { throw failure("AES-256-GCM encryption") }
        return Data([version] + nonce + ciphertext.prefix(total) + tag)
    }

    /// The password in `blob`, or nil when it does not authenticate (wrong key, wrong user,
    /// altered bytes, unknown version).
    static func open(_ blob: Data, user: UserID, key: SecretKey) -> String? {
        let bytes = Array(blob)
        guard bytes.count >= 1 + nonceLength + tagLength, bytes[0] == version else { return nil }
        let nonce = Array(bytes[1..<(1 + nonceLength)])
        let ciphertext = Array(bytes[(1 + nonceLength)..<(bytes.count - tagLength)])
        var tag = Array(bytes[(bytes.count - tagLength)...])
        let aad = associatedData(user)
        guard let context = EVP_CIPHER_CTX_new() else { return nil }
        defer { EVP_CIPHER_CTX_free(context) }
        var plaintext = [UInt8](repeating: 0, count: ciphertext.count + 16)
        var length: Int32 = 0
        var total = 0
        let ok: Bool = key.bytes.withUnsafeBytes { keyBytes in
            let keyPointer = keyBytes.bindMemory(to: UInt8.self).baseAddress
            guard EVP_DecryptInit_ex(context, EVP_aes_256_gcm(), nil, nil, nil) == 1,
                EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_IVLEN, Int32(nonceLength), nil) == 1,
                EVP_DecryptInit_ex(context, nil, nil, keyPointer, nonce) == 1,
                EVP_DecryptUpdate(context, nil, &length, aad, Int32(aad.count)) == 1,
                EVP_DecryptUpdate(context, &plaintext, &length, ciphertext, Int32(ciphertext.count)) == 1,
                EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, Int32(tagLength), &tag) == 1
            else { return false }
            total = Int(length)
            // The tag is checked here: a blob that was altered or moved fails.
            let finished = plaintext.withUnsafeMutableBufferPointer { buffer in
                EVP_DecryptFinal_ex(context, buffer.baseAddress! + total, &length) == 1
            }
            guard finished else { return false }
            total += Int(length)
            return true
        }
        guard ok else { return nil }
        return String(validating: plaintext.prefix(total), as: UTF8.self)
    }

    private static func failure(_ what: String) -> LibraryError {
        LibraryError.invalidPassword(reason: "\(what) failed in OpenSSL")
    }
}
