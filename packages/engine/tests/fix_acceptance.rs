//! The QuickFIX/J server-side FIX 4.2 and FIX 4.4 acceptance definitions, each played against a
//! fresh acceptor in test mode on an ephemeral port (one test per definition file).

#[path = "fix_acceptance/runner.rs"]
mod runner;

use std::sync::Arc;
use tidewire_engine::fix::acceptor::{Acceptor, AcceptorConfig, EchoApplication, SessionSettings};
use tidewire_engine::fix::dictionary::Dictionary;
use tidewire_engine::fix::session::{SessionConfig, SystemClock};

/// The acceptor the definitions expect: one session of the definitions' FIX version (its
/// standard dictionary), SenderCompID ISLD, TargetCompID TW, sequence numbers reset when a
/// connection ends, no NextExpectedMsgSeqNum (789) in the Logon (QuickFIX/J's default; its
/// 789 definitions are a separate suite), the echo application.
fn test_mode_acceptor(dictionary: Dictionary) -> Acceptor {
    let mut session = SessionConfig::new(dictionary, "ISLD", "TW");
    session.reset_on_disconnect = true;
    session.next_expected_msg_seq_num = false;
    let settings = SessionSettings {
        config: session,
        user: "fix-test".into(),
    };
    let cfg = AcceptorConfig::new("127.0.0.1:0".parse().expect("addr"), vec![settings]);
    Acceptor::start(cfg, Arc::new(EchoApplication::new()), Arc::new(SystemClock::default())).expect("acceptor starts")
}

/// Plays `definitions/<dir>/<file>` against a test-mode acceptor with `dictionary`.
fn play(dir: &str, dictionary: Dictionary, file: &str) {
    let path = format!(
        "{}/tests/fix_acceptance/definitions/{dir}/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let acceptor = test_mode_acceptor(dictionary);
    let result = runner::run(&text, acceptor.local_addr());
    acceptor.stop();
    if let Err(e) = result {
        panic!("{file}: {e}");
    }
}

/// One module per FIX version: a test per definition file, and a test that every file of the
/// version's directory is listed (`$count` files).
macro_rules! definitions {
    ($module:ident, $dir:literal, $dictionary:expr, $count:literal, { $($name:ident => $file:literal,)* }) => {
        mod $module {
            use super::*;

            $(
                #[test]
                fn $name() {
                    play($dir, $dictionary, $file);
                }
            )*

            /// Every definition file has a test above.
            #[test]
            fn every_definition_is_played() {
                let dir = format!("{}/tests/fix_acceptance/definitions/{}", env!("CARGO_MANIFEST_DIR"), $dir);
                let mut files: Vec<String> = std::fs::read_dir(&dir)
                    .expect("definitions")
                    .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
                    .filter(|n| n.ends_with(".def"))
                    .collect();
                files.sort();
                let mut listed = vec![$($file),*];
                listed.sort();
                assert_eq!(files, listed);
                assert_eq!(listed.len(), $count);
            }
        }
    };
}

definitions!(fix42, "fix42", Dictionary::fix42(), 63, {
    def_10_msgseqnumequal => "10_MsgSeqNumEqual.def",
    def_10_msgseqnumgreater => "10_MsgSeqNumGreater.def",
    def_10_msgseqnumless => "10_MsgSeqNumLess.def",
    def_11a_newseqnogreater => "11a_NewSeqNoGreater.def",
    def_11b_newseqnoequal => "11b_NewSeqNoEqual.def",
    def_11c_newseqnoless => "11c_NewSeqNoLess.def",
    def_13b_unsolicitedlogoutmessage => "13b_UnsolicitedLogoutMessage.def",
    def_14a_badfield => "14a_BadField.def",
    def_14b_requiredfieldmissing => "14b_RequiredFieldMissing.def",
    def_14c_tagnotdefinedformsgtype => "14c_TagNotDefinedForMsgType.def",
    def_14d_tagspecifiedwithoutvalue => "14d_TagSpecifiedWithoutValue.def",
    def_14e_incorrectenumvalue => "14e_IncorrectEnumValue.def",
    def_14f_incorrectdataformat => "14f_IncorrectDataFormat.def",
    def_14g_headerbodytrailerfieldsoutoforder => "14g_HeaderBodyTrailerFieldsOutOfOrder.def",
    def_14h_repeatedtag => "14h_RepeatedTag.def",
    def_14i_repeatinggroupcountnotequal => "14i_RepeatingGroupCountNotEqual.def",
    def_14j_outoforderrepeatinggroupmembers => "14j_OutOfOrderRepeatingGroupMembers.def",
    def_15_headerandbodyfieldsordereddifferently => "15_HeaderAndBodyFieldsOrderedDifferently.def",
    def_19a_possresendmessagethathasalreadybeensent => "19a_PossResendMessageThatHAsAlreadyBeenSent.def",
    def_19b_possresendmessagethathasnotbeensent => "19b_PossResendMessageThatHasNotBeenSent.def",
    def_1a_validlogonmsgseqnumtoohigh => "1a_ValidLogonMsgSeqNumTooHigh.def",
    def_1a_validlogonwithcorrectmsgseqnum => "1a_ValidLogonWithCorrectMsgSeqNum.def",
    def_1b_duplicateidentity => "1b_DuplicateIdentity.def",
    def_1c_invalidsendercompid => "1c_InvalidSenderCompID.def",
    def_1c_invalidtargetcompid => "1c_InvalidTargetCompID.def",
    def_1d_invalidlogonbadsendingtime => "1d_InvalidLogonBadSendingTime.def",
    def_1d_invalidlogonlengthinvalid => "1d_InvalidLogonLengthInvalid.def",
    def_1d_invalidlogonwrongbeginstring => "1d_InvalidLogonWrongBeginString.def",
    def_1e_notlogonmessage => "1e_NotLogonMessage.def",
    def_20_simultaneousresendrequest => "20_SimultaneousResendRequest.def",
    def_21_repeatinggroupspecifierwithvalueofzero => "21_RepeatingGroupSpecifierWithValueOfZero.def",
    def_2a_msgseqnumcorrect => "2a_MsgSeqNumCorrect.def",
    def_2b_msgseqnumtoohigh => "2b_MsgSeqNumTooHigh.def",
    def_2c_msgseqnumtoolow => "2c_MsgSeqNumTooLow.def",
    def_2d_garbledmessage => "2d_GarbledMessage.def",
    def_2e_possdupalreadyreceived => "2e_PossDupAlreadyReceived.def",
    def_2e_possdupnotreceived => "2e_PossDupNotReceived.def",
    def_2f_possduporigsendingtimetoohigh => "2f_PossDupOrigSendingTimeTooHigh.def",
    def_2g_possdupnoorigsendingtime => "2g_PossDupNoOrigSendingTime.def",
    def_2i_beginstringvalueunexpected => "2i_BeginStringValueUnexpected.def",
    def_2k_compiddoesnotmatchprofile => "2k_CompIDDoesNotMatchProfile.def",
    def_2m_bodylengthvaluenotcorrect => "2m_BodyLengthValueNotCorrect.def",
    def_2o_sendingtimevalueoutofrange => "2o_SendingTimeValueOutOfRange.def",
    def_2q_msgtypenotvalid => "2q_MsgTypeNotValid.def",
    def_2r_unregisteredmsgtype => "2r_UnregisteredMsgType.def",
    def_2t_firstthreefieldsoutoforder => "2t_FirstThreeFieldsOutOfOrder.def",
    def_3b_invalidchecksum => "3b_InvalidChecksum.def",
    def_3c_garbledmessage => "3c_GarbledMessage.def",
    def_4a_nodatasentduringheartbtint => "4a_NoDataSentDuringHeartBtInt.def",
    def_4b_receivedtestrequest => "4b_ReceivedTestRequest.def",
    def_6_sendtestrequest => "6_SendTestRequest.def",
    def_7_receiverejectmessage => "7_ReceiveRejectMessage.def",
    def_8_adminandapplicationmessages => "8_AdminAndApplicationMessages.def",
    def_8_onlyadminmessages => "8_OnlyAdminMessages.def",
    def_8_onlyapplicationmessages => "8_OnlyApplicationMessages.def",
    def_alreadyloggedon => "AlreadyLoggedOn.def",
    def_minqty42 => "MinQty42.def",
    def_qfj648_negativeheartbtint => "QFJ648_NegativeHeartBtInt.def",
    def_qfj650_missingmsgseqnum => "QFJ650_MissingMsgSeqNum.def",
    def_rejectresentmessage => "RejectResentMessage.def",
    def_reverseroute => "ReverseRoute.def",
    def_reverseroutewithemptyroutingtags => "ReverseRouteWithEmptyRoutingTags.def",
    def_bugfix_qfj634_resendrequestandsequencereset => "bugfix_QFJ634_ResendRequestAndSequenceReset.def",
});

definitions!(fix44, "fix44", Dictionary::fix44(), 11, {
    def_11c_newseqnoless => "11c_NewSeqNoLess.def",
    def_14j_outoforderrepeatinggroupmembers => "14j_OutOfOrderRepeatingGroupMembers.def",
    def_1b_duplicateidentity => "1b_DuplicateIdentity.def",
    def_1d_invalidlogonbadsendingtime => "1d_InvalidLogonBadSendingTime.def",
    def_2e_possdupalreadyreceived => "2e_PossDupAlreadyReceived.def",
    def_2e_possdupnotreceived => "2e_PossDupNotReceived.def",
    def_2k_compiddoesnotmatchprofile => "2k_CompIDDoesNotMatchProfile.def",
    def_2q_msgtypenotvalid => "2q_MsgTypeNotValid.def",
    def_3c_garbledmessage => "3c_GarbledMessage.def",
    def_minqty44 => "MinQty44.def",
    def_qfj934_missingdelimiternestedrepeatinggroup => "QFJ934_MissingDelimiterNestedRepeatingGroup.def",
});
