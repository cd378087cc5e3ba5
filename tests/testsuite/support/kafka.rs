//! A blocking Kafka consumer for the end-to-end tests (the library under test is async): one
//! request on a connection, joining and leaving a consumer group on the local one-broker stack.
#![allow(dead_code)]

use kafka_protocol::messages::{ApiKey, GroupId, RequestHeader, ResponseHeader};
use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion, StrBytes};
use std::io::{Read, Write};

/// One request on a blocking connection (the test's consumer; the library under test is async).
pub fn call<Req: Encodable + HeaderVersion, Resp: Decodable + HeaderVersion>(
    conn: &mut std::net::TcpStream,
    key: ApiKey,
    version: i16,
    req: &Req,
) -> Resp {
    let mut body = bytes::BytesMut::new();
    RequestHeader::default()
        .with_request_api_key(key as i16)
        .with_request_api_version(version)
        .with_correlation_id(7)
        .with_client_id(Some(StrBytes::from_static_str("flinkpipe-e2e")))
        .encode(&mut body, Req::header_version(version))
        .unwrap();
    req.encode(&mut body, version).unwrap();
    conn.write_all(&(body.len() as i32).to_be_bytes()).unwrap();
    conn.write_all(&body).unwrap();
    let mut len = [0u8; 4];
    conn.read_exact(&mut len).unwrap();
    let mut buf = vec![0u8; i32::from_be_bytes(len) as usize];
    conn.read_exact(&mut buf).unwrap();
    let mut b = bytes::Bytes::from(buf);
    ResponseHeader::decode(&mut b, Resp::header_version(version)).unwrap();
    Resp::decode(&mut b, version).unwrap()
}

/// A consumer that joins `group` (the broker is its coordinator: a one-broker stack) and stays a
/// member for the session timeout without heartbeats; returns its member id.
pub fn join(conn: &mut std::net::TcpStream, group: &str) -> String {
    use kafka_protocol::messages::join_group_request::JoinGroupRequestProtocol;
    use kafka_protocol::messages::sync_group_request::SyncGroupRequestAssignment;
    use kafka_protocol::messages::{
        JoinGroupRequest, JoinGroupResponse, SyncGroupRequest, SyncGroupResponse,
    };
    let req = |member: &str| {
        JoinGroupRequest::default()
            .with_group_id(GroupId(StrBytes::from_string(group.to_string())))
            .with_session_timeout_ms(45_000)
            .with_rebalance_timeout_ms(45_000)
            .with_member_id(StrBytes::from_string(member.to_string()))
            .with_protocol_type(StrBytes::from_static_str("consumer"))
            .with_protocols(vec![
                JoinGroupRequestProtocol::default()
                    .with_name(StrBytes::from_static_str("range"))
                    .with_metadata(bytes::Bytes::new()),
            ])
    };
    // v4+: the first join answers MEMBER_ID_REQUIRED (79) with the member id to join with.
    let first: JoinGroupResponse = call(conn, ApiKey::JoinGroup, 5, &req(""));
    assert_eq!(first.error_code, 79, "{first:?}");
    let member = first.member_id.as_str().to_string();
    let joined: JoinGroupResponse = call(conn, ApiKey::JoinGroup, 5, &req(&member));
    assert_eq!(joined.error_code, 0, "{joined:?}");
    let synced: SyncGroupResponse = call(
        conn,
        ApiKey::SyncGroup,
        3,
        &SyncGroupRequest::default()
            .with_group_id(GroupId(StrBytes::from_string(group.to_string())))
            .with_generation_id(joined.generation_id)
            .with_member_id(StrBytes::from_string(member.clone()))
            .with_assignments(vec![
                SyncGroupRequestAssignment::default()
                    .with_member_id(StrBytes::from_string(member.clone()))
                    .with_assignment(bytes::Bytes::new()),
            ]),
    );
    assert_eq!(synced.error_code, 0, "{synced:?}");
    member
}

pub fn leave(conn: &mut std::net::TcpStream, group: &str, member: &str) {
    use kafka_protocol::messages::leave_group_request::MemberIdentity;
    use kafka_protocol::messages::{LeaveGroupRequest, LeaveGroupResponse};
    let left: LeaveGroupResponse = call(
        conn,
        ApiKey::LeaveGroup,
        3,
        &LeaveGroupRequest::default()
            .with_group_id(GroupId(StrBytes::from_string(group.to_string())))
            .with_members(vec![
                MemberIdentity::default().with_member_id(StrBytes::from_string(member.to_string())),
            ]),
    );
    assert_eq!(left.error_code, 0, "{left:?}");
}

/// Deletes `group` (`DeleteGroups` v2 on the one broker, its coordinator); best effort, for clean-ups:
/// returns the group's error code (0: deleted; 69 `GROUP_ID_NOT_FOUND`).
pub fn delete_group(conn: &mut std::net::TcpStream, group: &str) -> i16 {
    use kafka_protocol::messages::{DeleteGroupsRequest, DeleteGroupsResponse};
    let r: DeleteGroupsResponse = call(
        conn,
        ApiKey::DeleteGroups,
        2,
        &DeleteGroupsRequest::default()
            .with_groups_names(vec![GroupId(StrBytes::from_string(group.to_string()))]),
    );
    r.results.first().map(|g| g.error_code).unwrap_or(-1)
}
