//! Container members as a rule reload re-checks them (`Engine.containerMembers`): the server
//! checks every member of a container against each user who may view it, and closes views that
//! would show a member the user may no longer subscribe to (docs/security.md "Reload").

use super::Hub;

/// Marks a per-tier mirror of a container (`<container>#tier:<tier>`): internal, never listed.
const TIER_MIRROR: &str = "#tier:";

/// One container and its members (`Hub::container_members`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerMembers {
    /// Container subject.
    pub container: String,
    /// Member subjects in natural order (position); empty when the container is empty or unknown.
    pub members: Vec<String>,
}

impl Hub {
    /// The members of `containers`, one entry per name in the order asked (an unknown or empty
    /// container: no members; a name asked twice: listed twice). An empty `containers` lists every
    /// container that has members, by subject id (first published first); the per-tier mirrors the
    /// engine keeps for tiered views are never listed (their members are the constituents'
    /// tier variants; the constituents are what a user is entitled to). O(members listed + subjects
    /// for the whole list).
    pub fn container_members(&self, containers: &[String]) -> Vec<ContainerMembers> {
        if containers.is_empty() {
            return (0..=self.store.max_id())
                .filter_map(|id| self.views.set.container(id).filter(|c| !c.is_empty()).map(|c| (id, c)))
                .filter(|(id, _)| !self.store.subject(*id).contains(TIER_MIRROR))
                .map(|(id, c)| ContainerMembers {
                    container: self.store.subject(id).to_owned(),
                    members: c.iter().map(|m| self.store.subject(m).to_owned()).collect(),
                })
                .collect();
        }
        containers
            .iter()
            .map(|name| {
                let members = self
                    .store
                    .lookup(name)
                    .and_then(|id| self.views.set.container(id))
                    .map(|c| c.iter().map(|m| self.store.subject(m).to_owned()).collect())
                    .unwrap_or_default();
                ContainerMembers {
                    container: name.clone(),
                    members,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;
    use crate::config::EngineConfig;
    use crate::hub::{Command, ContainerOp};

    fn publish(hub: &mut Hub, container: &str, ops: Vec<ContainerOp>, now: Instant) {
        hub.handle(
            Command::ContainerPublish {
                subject: container.into(),
                ops,
            },
            now,
        );
    }

    fn strings(s: &[&str]) -> Vec<String> {
        s.iter().map(|&x| x.to_owned()).collect()
    }

    #[test]
    fn lists_members_in_natural_order_after_adds_inserts_and_removes() {
        let now = Instant::now();
        let mut hub = Hub::new(EngineConfig::default());
        publish(
            &mut hub,
            "/C/A",
            vec![ContainerOp::Add(strings(&["/X/1", "/X/2", "/SECRET/A"]))],
            now,
        );
        publish(
            &mut hub,
            "/C/A",
            vec![
                ContainerOp::InsertAt(0, strings(&["/X/0"])),
                ContainerOp::Remove(strings(&["/X/2"])),
            ],
            now,
        );
        publish(&mut hub, "/C/B", vec![ContainerOp::Add(strings(&["/X/9"]))], now);
        let got = hub.container_members(&strings(&["/C/A", "/NOPE", "/C/B", "/X/1"]));
        let got: Vec<(&str, Vec<&str>)> = got
            .iter()
            .map(|c| (c.container.as_str(), c.members.iter().map(String::as_str).collect()))
            .collect();
        assert_eq!(
            got,
            [
                ("/C/A", vec!["/X/0", "/X/1", "/SECRET/A"]),
                ("/NOPE", vec![]),
                ("/C/B", vec!["/X/9"]),
                ("/X/1", vec![]), // a record, not a container
            ]
        );
    }

    #[test]
    fn an_empty_request_lists_every_non_empty_container_but_no_tier_mirror() {
        let now = Instant::now();
        let mut hub = Hub::new(EngineConfig::default());
        assert!(hub.container_members(&[]).is_empty());
        publish(&mut hub, "/C/A", vec![ContainerOp::Add(strings(&["/X/1"]))], now);
        publish(&mut hub, "/C/B", vec![ContainerOp::Add(strings(&["/X/2"]))], now);
        let b = hub.store.lookup("/C/B").unwrap();
        let mirror = hub.tier_container(b, "T2"); // what a T2 session's view of /C/B opens
        assert!(hub.store.subject(mirror).contains(TIER_MIRROR));
        publish(
            &mut hub,
            "/C/E",
            vec![ContainerOp::Add(strings(&["/X/3"])), ContainerOp::Clear],
            now,
        );
        let got = hub.container_members(&[]);
        let names: Vec<&str> = got.iter().map(|c| c.container.as_str()).collect();
        assert_eq!(names, ["/C/A", "/C/B"]);
        assert_eq!(got[1].members, ["/X/2"]);
    }

    #[test]
    fn fifty_thousand_members_are_listed_in_order() {
        let now = Instant::now();
        let mut hub = Hub::new(EngineConfig::default());
        let subjects: Vec<String> = (0..50_000).map(|i| format!("/P/{i:05}")).collect();
        publish(&mut hub, "/C/BIG", vec![ContainerOp::Add(subjects.clone())], now);
        let got = hub.container_members(&strings(&["/C/BIG"]));
        assert_eq!(got[0].members, subjects);
    }
}
