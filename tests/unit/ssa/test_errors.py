from syncagent.ssa.errors import (
    ApiError,
    ConflictError,
    DryRunBlockedError,
    ImmutableFieldError,
    InvalidError,
    NotFoundError,
    PreconditionError,
    UndeclaredFieldError,
    error_from_status,
    parse_conflicts,
)

SUBJECT = "Deployment/ns/web"


def conflict_status():
    return {
        "kind": "Status",
        "status": "Failure",
        "message": 'Apply failed with 2 conflicts: conflict with "kubectl-edit" using apps/v1: '
        '.spec.replicas\nconflict with "other-applier": .spec.ports[port=8000,protocol="TCP"]',
        "reason": "Conflict",
        "details": {
            "causes": [
                {
                    "reason": "FieldManagerConflict",
                    "message": 'conflict with "kubectl-edit" using apps/v1',
                    "field": ".spec.replicas",
                },
                {
                    "reason": "FieldManagerConflict",
                    "message": 'conflict with "other-applier"',
                    "field": '.spec.ports[port=8000,protocol="TCP"]',
                },
            ]
        },
        "code": 409,
    }


def test_409_field_manager_conflicts_are_parsed():
    err = error_from_status(SUBJECT, 409, conflict_status())
    assert isinstance(err, ConflictError)
    assert [(c.path, c.manager, c.operation) for c in err.conflicts] == [
        (".spec.replicas", "kubectl-edit", "Update"),
        (".spec.ports[port=8000,protocol=TCP]", "other-applier", "Apply"),
    ]
    assert err.conflicts[0].api_version == "apps/v1"
    assert str(err).startswith(f"{SUBJECT}: apply conflicts")
    assert ".spec.replicas owned by 'kubectl-edit'" in str(err)
    assert "force" in str(err)


def test_409_without_manager_causes_is_a_precondition_failure():
    status = {
        "code": 409,
        "reason": "Conflict",
        "message": "Precondition failed: UID in precondition: a, UID in object meta: b",
    }
    err = error_from_status(SUBJECT, 409, status)
    assert isinstance(err, PreconditionError)
    assert not isinstance(err, ConflictError)
    assert str(err).startswith(f"{SUBJECT}: Precondition failed")


def test_immutable_selector_is_classified_narrowly():
    status = {
        "code": 422,
        "reason": "Invalid",
        "message": 'Deployment.apps "web" is invalid: spec.selector: Invalid value: ...: '
        "field is immutable",
        "details": {
            "causes": [
                {
                    "reason": "FieldValueInvalid",
                    "message": "Invalid value: {...}: field is immutable",
                    "field": "spec.selector",
                }
            ]
        },
    }
    err = error_from_status(SUBJECT, 422, status)
    assert isinstance(err, ImmutableFieldError)
    assert err.fields == (".spec.selector",)
    assert str(err).startswith(f"{SUBJECT}: immutable field(s) .spec.selector")
    assert "delete and recreate" in str(err)


def test_plain_invalid_value_is_not_immutable():
    status = {
        "code": 422,
        "reason": "Invalid",
        "message": "invalid",
        "details": {
            "causes": [
                {
                    "reason": "FieldValueInvalid",
                    "message": "Invalid value: -1: must be greater than or equal to 0",
                    "field": "spec.replicas",
                },
                {
                    "reason": "FieldValueRequired",
                    "message": "Required value",
                    "field": "spec.template.spec.containers[0].image",
                },
            ]
        },
    }
    err = error_from_status(SUBJECT, 422, status)
    assert isinstance(err, InvalidError)
    assert not isinstance(err, ImmutableFieldError)
    assert [c.path for c in err.causes] == [
        ".spec.replicas",
        ".spec.template.spec.containers[0].image",
    ]
    assert str(err).startswith(f"{SUBJECT}: invalid: .spec.replicas: Invalid value: -1")


def test_webhook_without_dry_run_support():
    status = {
        "code": 400,
        "reason": "BadRequest",
        "message": 'admission webhook "x.example.com" does not support dry run',
    }
    err = error_from_status(SUBJECT, 400, status)
    assert isinstance(err, DryRunBlockedError)
    assert str(err).startswith(f"{SUBJECT}: admission webhook")


def test_other_failures_keep_code_and_reason():
    err = error_from_status(SUBJECT, 404, {"code": 404, "reason": "NotFound", "message": "nope"})
    assert isinstance(err, NotFoundError)
    err = error_from_status(SUBJECT, 403, {"code": 403, "reason": "Forbidden", "message": "no"})
    assert type(err) is ApiError
    assert (err.code, err.reason) == (403, "Forbidden")
    assert str(err).startswith(f"{SUBJECT}: no")


def test_non_conflict_causes_are_ignored():
    assert parse_conflicts([{"reason": "FieldValueInvalid", "field": "x"}]) == []


def test_an_applied_field_the_schema_lacks():
    # The API server's words (kube-apiserver 1.36) for an apply setting .status.routing on a
    # CRD that does not declare it: HTTP 500, whatever fieldValidation says.
    message = (
        "failed to create typed patch object (ns/g; nvidia.com/v1beta1, "
        "Kind=DynamoGraphDeployment): .status.routing: field not declared in schema"
    )
    err = error_from_status(SUBJECT, 500, {"code": 500, "message": message})
    assert isinstance(err, UndeclaredFieldError)
    assert err.fields == (".status.routing",)
    assert str(err).startswith(f"{SUBJECT}: .status.routing: not declared in the served schema")
