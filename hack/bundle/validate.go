// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package main

import (
	"fmt"

	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/validation"
	"github.com/operator-framework/api/pkg/validation/errors"
)

// validators are the Operator Framework's default bundle validators
// (bundle, CSV, CRD) and those OperatorHub applies to a submission;
// CommunityOperatorValidator is left out, deprecated in favour of
// OperatorHubV2Validator.
var validators = validation.DefaultBundleValidators.WithValidators(
	validation.OperatorHubV2Validator,
	validation.StandardCapabilitiesValidator,
	validation.StandardCategoriesValidator,
	validation.GoodPracticesValidator,
	validation.ObjectValidator,
	validation.AlphaDeprecatedAPIsValidator,
)

// finding is one error or warning of a validator.
type finding struct {
	isError bool
	text    string
}

func (f finding) String() string {
	if f.isError {
		return "ERROR " + f.text
	}
	return "WARN  " + f.text
}

// validateBundle loads the bundle in dir as OLM's registry does and returns
// what the validators report on it; err is for a bundle that does not load.
func validateBundle(dir string) ([]finding, error) {
	bundle, err := manifests.GetBundleFromDir(dir)
	if err != nil {
		return nil, fmt.Errorf("load bundle %s: %w", dir, err)
	}
	var out []finding
	add := func(isError bool, res errors.ManifestResult, e errors.Error) {
		out = append(out, finding{isError: isError, text: fmt.Sprintf("%s: %s", res.Name, e.Error())})
	}
	for _, res := range validators.Validate(bundle.ObjectsToValidate()...) {
		for _, e := range res.Errors {
			add(true, res, e)
		}
		for _, e := range res.Warnings {
			add(false, res, e)
		}
	}
	return out, nil
}
